// The search indexer steps aside while requests flow and uses the gaps between them (src/domain/search-indexer.ts):
// with a request in flight it waits; once none is, it indexes small chunks until the next one arrives, if a table has
// enough rows waiting to be worth it.
import { afterEach, describe, expect, it } from 'vitest';
import { createActivityMonitor } from '../src/domain/activity.js';
import type { Deps } from '../src/domain/deps.js';
import { createSearchIndexer, type SearchIndexer } from '../src/domain/search-indexer.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('search indexer between requests', () => {
  let indexer: SearchIndexer | undefined;
  let traffic: NodeJS.Timeout | undefined;
  afterEach(async () => {
    clearInterval(traffic);
    await indexer?.stop();
  });

  it('waits while a request is in flight and indexes small chunks once none is, when enough rows wait', async () => {
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
    // Requests keep arriving, one always in flight, so it is never quiet.
    const flow = () => {
      activity.noteRequest();
      traffic = setInterval(() => {
        activity.noteRequest();
        activity.noteAnswered();
      }, 10);
    };
    flow();
    indexer = createSearchIndexer({ store } as unknown as Deps, async () => [], activity);
    // A few rows are not worth a step of their own between requests: they wait for quiet, or for the next full chunk.
    indexer.touch('tblA', 10);
    clearInterval(traffic);
    activity.noteAnswered();
    await pause(60);
    expect(chunks).toEqual([]);
    flow();
    indexer.touch('tblA', 1000);
    // Small chunks are the gaps'; a full one (2,000) could run only if the timers stalled for the quiet time (100 ms).
    const small = () => chunks.filter((n) => n < 2000).length;
    await pause(250);
    expect(small()).toBe(0);

    clearInterval(traffic);
    activity.noteAnswered();
    await pause(60);
    expect(small()).toBeGreaterThan(0);

    flow();
    await pause(20);
    const seen = small();
    await pause(200);
    expect(small()).toBe(seen);
    expect(indexer.isPending('tblA')).toBe(true);
  });
});
