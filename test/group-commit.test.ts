// groupCommit (src/db/store.ts): concurrent callers share a transaction, each settles with it, later ones wait for the next.
import { describe, expect, it } from 'vitest';
import { groupCommit, type UnitOfWork } from '../src/db/store.js';

function fakeStore(fail?: (items: number[]) => boolean) {
  const commits: number[][] = [];
  let release: (() => void) | undefined;
  const store = {
    hold: false,
    async transaction<T>(fn: (tx: UnitOfWork) => Promise<T>): Promise<T> {
      const result = await fn({} as UnitOfWork);
      if (store.hold) await new Promise<void>((r) => (release = r));
      return result;
    },
  };
  const add = groupCommit<number>(store as never, async (_tx, items) => {
    if (fail?.(items)) throw new Error(`refused ${items.join(',')}`);
    commits.push(items);
  });
  return { store, add, commits, release: () => release?.() };
}

describe('groupCommit', () => {
  it('writes the items of one turn in one transaction and settles each caller when it commits', async () => {
    const { add, commits } = fakeStore();
    await Promise.all([add(1), add(2), add(3)]);
    expect(commits).toEqual([[1, 2, 3]]);
    await add(4);
    expect(commits).toEqual([[1, 2, 3], [4]]);
  });

  it('items given while a transaction is being written go into the next one', async () => {
    const { store, add, commits, release } = fakeStore();
    store.hold = true;
    const first = add(1);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    const later = [add(2), add(3)];
    store.hold = false;
    release();
    await Promise.all([first, ...later]);
    expect(commits).toEqual([[1], [2, 3]]);
  });

  it('a failed transaction rejects every caller in it, and the next one is written', async () => {
    const { add, commits } = fakeStore((items) => items.includes(2));
    const results = await Promise.allSettled([add(1), add(2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await add(5);
    expect(commits).toEqual([[5]]);
  });
});
