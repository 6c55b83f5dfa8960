// The search indexer steps aside while requests flow (src/domain/search-indexer.ts): it indexes once no request has
// arrived for a while, and while they keep arriving it still runs a chunk at least once a second.
import { afterEach, describe, expect, it } from 'vitest';
import { createActivityMonitor } from '../src/domain/activity.js';
import type { Deps } from '../src/domain/deps.js';
import { createSearchIndexer, type SearchIndexer } from '../src/domain/search-indexer.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('search indexer beside requests', () => {
  let indexer: SearchIndexer | undefined;
  let traffic: NodeJS.Timeout | undefined;
  afterEach(async () => {
    clearInterval(traffic);
    await indexer?.stop();
  });

  it('waits while requests keep arriving, runs a chunk at least once a second meanwhile, and indexes once they stop', async () => {
    const chunks: number[] = [];
    // A store whose table never runs out of rows to index: each step asks for `limit` rows.
    const store = {
      async transaction(work: (tx: unknown) => Promise<void>) {
        const after: Array<() => void> = [];
        await work({ records: { syncSearch: async (_t: string, _f: unknown, limit: number) => (chunks.push(limit), true) }, afterCommit: (f: () => void) => after.push(f) });
        for (const f of after) f();
      },
    };
    const activity = createActivityMonitor();
    // A request every 10 ms: never 100 ms of quiet.
    activity.noteRequest();
    traffic = setInterval(() => activity.noteRequest(), 10);
    indexer = createSearchIndexer({ store } as unknown as Deps, async () => [], activity);
    indexer.touch('tblA');
    await pause(400);
    expect(chunks).toEqual([]);
    // A second without a chunk: one runs although requests go on, then it waits again.
    await pause(900);
    expect(chunks.length).toBeGreaterThan(0);
    expect(chunks.length).toBeLessThan(3);
    expect(chunks.every((n) => n === 2000)).toBe(true);

    clearInterval(traffic);
    const before = chunks.length;
    await pause(400);
    expect(chunks.length).toBeGreaterThan(before + 1);
    expect(indexer.isPending('tblA')).toBe(true);
  });
});
