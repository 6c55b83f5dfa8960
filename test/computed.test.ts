// Computed fields end to end (contract section 12): definitions and their errors, and values that stay current through
// every kind of write. Each stale-value case compares the stored values with a copy of the field computed from scratch.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, makeTable, type TestClient } from './helpers.js';

let c: TestClient;
beforeAll(async () => {
  c = await makeApp();
});
afterAll(() => c.close());

const ok = <T = any>(res: { status: number; body: any }, status = 200): T => {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
};
const field = async (tableId: string, body: Record<string, unknown>) => ok(await c.request('POST', `/api/v1/tables/${tableId}/fields`, { body }), 201);
const create = async (tableId: string, fields: Record<string, unknown>) => ok(await c.request('POST', `/api/v1/tables/${tableId}/records`, { body: { fields } }), 201);
const update = async (tableId: string, id: string, fields: Record<string, unknown>) => ok(await c.request('PUT', `/api/v1/tables/${tableId}/records/${id}`, { body: { fields } }));
const remove = async (tableId: string, id: string) => ok(await c.request('DELETE', `/api/v1/tables/${tableId}/records/${id}`));
const all = async (tableId: string): Promise<Array<{ id: string; fields: Record<string, unknown> }>> =>
  ok(await c.request('GET', `/api/v1/tables/${tableId}/records?page_size=1000`)).items;
const valueOf = async (tableId: string, id: string, name: string) => ok(await c.request('GET', `/api/v1/tables/${tableId}/records/${id}`)).fields[name];

/**
 * The stored values of computed field `name` equal those of a new field with the same definition, which the service
 * computes from scratch for every record when it is added.
 */
async function expectCurrent(tableId: string, name: string) {
  const fields = ok(await c.request('GET', `/api/v1/tables/${tableId}/fields?page_size=1000`)).items as any[];
  const def = fields.find((f) => f.name === name);
  const { result_type: _ignored, ...config } = def.config;
  const copy = await field(tableId, { name: `${name} (scratch)`, type: def.type, config });
  try {
    for (const r of await all(tableId)) expect(r.fields[name], `${name} of ${r.id}`).toEqual(r.fields[copy.name]);
  } finally {
    ok(await c.request('DELETE', `/api/v1/tables/${tableId}/fields/${copy.id}`));
  }
}

describe('definitions', () => {
  let t: string;
  beforeAll(async () => {
    t = await makeTable(c, [{ name: 'Hours', type: 'number' }, { name: 'Name', type: 'text' }, { name: 'Rate', type: 'number' }]);
  });

  it('a formula stores its expression by id, shows it with current names, and infers its result type', async () => {
    const f = await field(t, { name: 'Long', type: 'formula', config: { expression: 'IF({Hours} > 8, "long", "short")' } });
    expect(f.config).toEqual({ expression: 'IF({Hours} > 8, "long", "short")', result_type: 'text' });
    expect(f.computing).toBeNull();
    const hours = (ok(await c.request('GET', `/api/v1/tables/${t}/fields`)).items as any[]).find((x) => x.name === 'Hours');
    ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${hours.id}`, { body: { name: 'Time' } }));
    const shown = (ok(await c.request('GET', `/api/v1/tables/${t}/fields`)).items as any[]).find((x) => x.name === 'Long');
    expect(shown.config.expression).toBe('IF({Time} > 8, "long", "short")');
    const r = await create(t, { Time: 9 });
    expect(r.fields.Long).toBe('long');
    ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${hours.id}`, { body: { name: 'Hours' } }));
  });

  it('refuses bad definitions with a 400 naming the config key and the place', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ type: 'formula', config: { expression: '{Hours} +' } }, 'config.expression', /position/],
      [{ type: 'formula', config: { expression: '{Hourz} * 2' } }, 'config.expression', /Hourz/],
      [{ type: 'formula', config: { expression: 'NOPE(1)' } }, 'config.expression', /NOPE/i],
      [{ type: 'formula', config: { expression: 'ROUND(1)' } }, 'config.expression', /argument/i],
      [{ type: 'formula', config: { expression: '{Name} * 2' } }, 'config.expression', /number/],
      [{ type: 'formula', config: {} }, 'config', /expression/],
      [{ type: 'count', config: { link_field: 'Hours' } }, 'config.link_field', /not a link/],
      [{ type: 'lookup', config: { link_field: 'Ghost', field: 'x' } }, 'config.link_field', /Ghost/],
      [{ type: 'rollup', config: { link_field: 'Hours', field: 'x', function: 'median' } }, 'config', /function/],
    ];
    for (const [body, key, message] of cases) {
      const res = await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name: 'Bad', ...body } });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.details?.[0]?.field, JSON.stringify(res.body)).toBe(key);
      expect(res.body.msg).toMatch(message);
    }
    expect((ok(await c.request('GET', `/api/v1/tables/${t}/fields`)).items as any[]).map((f) => f.name)).not.toContain('Bad');
  });

  it('refuses a cycle through a chain of computed fields, and a formula reading itself', async () => {
    const a = await field(t, { name: 'A', type: 'formula', config: { expression: '{Rate} + 1' } });
    await field(t, { name: 'B', type: 'formula', config: { expression: '{A} * 2' } });
    const res = await c.request('PUT', `/api/v1/tables/${t}/fields/${a.id}`, { body: { config: { expression: '{B} + 1' } } });
    expect(res.status).toBe(400);
    expect(res.body.msg).toMatch(/cycle/);
    const self = await c.request('POST', `/api/v1/tables/${t}/fields`, { body: { name: 'C', type: 'formula', config: { expression: '{C} + 1' } } });
    expect(self.status).toBe(400);
    expect(self.body.msg).toMatch(/cycle/);
  });

  it('deleting a field that a computed field reads is a 409 naming the readers', async () => {
    const rate = (ok(await c.request('GET', `/api/v1/tables/${t}/fields`)).items as any[]).find((x) => x.name === 'Rate');
    const res = await c.request('DELETE', `/api/v1/tables/${t}/fields/${rate.id}`);
    expect(res.status).toBe(409);
    expect(res.body.msg).toMatch(/"A"/);
  });

  it('computed values cannot be written (400 naming the field)', async () => {
    const res = await c.request('POST', `/api/v1/tables/${t}/records`, { body: { fields: { A: 3 } } });
    expect(res.status).toBe(400);
    expect(res.body.msg).toMatch(/"A"/);
  });
});

describe('values stay current', () => {
  let projects: string;
  let tasks: string;
  let people: string;
  let ids: Record<string, string>;

  beforeAll(async () => {
    people = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Rate', type: 'number' }]);
    tasks = await makeTable(c, [
      { name: 'Title', type: 'text' }, { name: 'Hours', type: 'number' }, { name: 'Done', type: 'checkbox' },
      { name: 'Owner', type: 'link', config: { table_id: people } },
    ]);
    projects = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Tasks', type: 'link', config: { table_id: tasks } }]);
    await field(tasks, { name: 'Rate', type: 'rollup', config: { link_field: 'Owner', field: 'Rate', function: 'max' } });
    await field(tasks, { name: 'Cost', type: 'formula', config: { expression: '{Hours} * {Rate}' } });
    await field(projects, { name: 'Total', type: 'rollup', config: { link_field: 'Tasks', field: 'Cost', function: 'sum' } });
    await field(projects, { name: 'Titles', type: 'lookup', config: { link_field: 'Tasks', field: 'Title' } });
    await field(projects, { name: 'N', type: 'count', config: { link_field: 'Tasks' } });
    await field(projects, { name: 'All done', type: 'rollup', config: { link_field: 'Tasks', field: 'Done', function: 'and' } });
    const ann = await create(people, { Name: 'Ann', Rate: 10 });
    const bob = await create(people, { Name: 'Bob', Rate: 20 });
    const t1 = await create(tasks, { Title: 'one', Hours: 2, Owner: [ann.id] });
    const t2 = await create(tasks, { Title: 'two', Hours: 3, Owner: [bob.id] });
    const p = await create(projects, { Name: 'P', Tasks: [t1.id, t2.id] });
    ids = { ann: ann.id, bob: bob.id, t1: t1.id, t2: t2.id, p: p.id };
  });

  it('a chain of three tables is computed on create', async () => {
    expect(await valueOf(tasks, ids.t1, 'Cost')).toBe(20);
    const p = ok(await c.request('GET', `/api/v1/tables/${projects}/records/${ids.p}`)).fields;
    expect(p).toMatchObject({ Total: 80, Titles: ['one', 'two'], N: 2, 'All done': false });
  });

  it('a value edit two tables away reaches the end of the chain', async () => {
    await update(people, ids.bob, { Rate: 30 });
    expect(await valueOf(tasks, ids.t2, 'Cost')).toBe(90);
    expect(await valueOf(projects, ids.p, 'Total')).toBe(110);
    await expectCurrent(projects, 'Total');
    await expectCurrent(tasks, 'Cost');
  });

  it('a link added and a link removed', async () => {
    const t3 = await create(tasks, { Title: 'three', Hours: 1, Owner: [ids.ann], Done: true });
    await update(projects, ids.p, { Tasks: [ids.t1, ids.t2, t3.id] });
    expect(await valueOf(projects, ids.p, 'N')).toBe(3);
    expect(await valueOf(projects, ids.p, 'Titles')).toEqual(['one', 'two', 'three']);
    await update(projects, ids.p, { Tasks: [t3.id] });
    expect(ok(await c.request('GET', `/api/v1/tables/${projects}/records/${ids.p}`)).fields).toMatchObject({ N: 1, Total: 10, 'All done': true, Titles: ['three'] });
    await update(tasks, ids.t1, { Owner: [] });
    expect(await valueOf(tasks, ids.t1, 'Rate')).toBeNull();
    expect(await valueOf(tasks, ids.t1, 'Cost')).toBeNull();
    await expectCurrent(projects, 'Titles');
    await expectCurrent(tasks, 'Rate');
    await update(projects, ids.p, { Tasks: [ids.t1, ids.t2, t3.id] });
    await update(tasks, ids.t1, { Owner: [ids.ann] });
  });

  it('a linked record deleted', async () => {
    const t4 = await create(tasks, { Title: 'four', Hours: 4, Owner: [ids.ann] });
    const before = await valueOf(projects, ids.p, 'N');
    await update(projects, ids.p, { Tasks: [...(await valueOf(projects, ids.p, 'Tasks') as string[]), t4.id] });
    expect(await valueOf(projects, ids.p, 'N')).toBe((before as number) + 1);
    await remove(tasks, t4.id);
    expect(await valueOf(projects, ids.p, 'N')).toBe(before);
    expect(await valueOf(projects, ids.p, 'Titles')).not.toContain('four');
    await remove(people, ids.bob);
    expect(await valueOf(tasks, ids.t2, 'Rate')).toBeNull();
    await expectCurrent(projects, 'Total');
    await expectCurrent(projects, 'N');
    await expectCurrent(tasks, 'Cost');
  });

  it('a formula reading a link as text changes when a linked record is deleted', async () => {
    const tags = await makeTable(c, [{ name: 'Tag', type: 'text' }]);
    const posts = await makeTable(c, [{ name: 'Tags', type: 'link', config: { table_id: tags } }]);
    await field(posts, { name: 'Has tags', type: 'formula', config: { expression: 'LEN({Tags}) > 0' } });
    const tag = await create(tags, { Tag: 'x' });
    const post = await create(posts, { Tags: [tag.id] });
    expect(post.fields['Has tags']).toBe(true);
    await remove(tags, tag.id);
    expect(await valueOf(posts, post.id, 'Has tags')).toBe(false);
    await expectCurrent(posts, 'Has tags');
  });

    it('a self-link, and a record linked to itself', async () => {
    const t = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Score', type: 'number' }]);
    const fields = ok(await c.request('GET', `/api/v1/tables/${t}/fields`)).items as any[];
    void fields;
    await field(t, { name: 'Parent', type: 'link', config: { table_id: t } });
    await field(t, { name: 'Parent score', type: 'rollup', config: { link_field: 'Parent', field: 'Score', function: 'sum' } });
    await field(t, { name: 'Twice', type: 'formula', config: { expression: '{Parent score} * 2' } });
    const a = await create(t, { Name: 'a', Score: 5 });
    const b = await create(t, { Name: 'b', Score: 7, Parent: [a.id] });
    expect(await valueOf(t, b.id, 'Twice')).toBe(10);
    await update(t, a.id, { Parent: [a.id] });
    expect(await valueOf(t, a.id, 'Parent score')).toBe(5);
    await update(t, a.id, { Score: 6 });
    expect(await valueOf(t, a.id, 'Twice')).toBe(12);
    expect(await valueOf(t, b.id, 'Twice')).toBe(12);
    await expectCurrent(t, 'Parent score');
    await expectCurrent(t, 'Twice');
  });

  it('a field renamed and a field type changed', async () => {
    const t = await makeTable(c, [{ name: 'Qty', type: 'text' }, { name: 'Price', type: 'number' }]);
    await field(t, { name: 'Label', type: 'formula', config: { expression: '{Qty} & "!"' } });
    const r = await create(t, { Qty: '4', Price: 2.5 });
    const qty = (ok(await c.request('GET', `/api/v1/tables/${t}/fields`)).items as any[]).find((x) => x.name === 'Qty');
    ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${qty.id}`, { body: { name: 'Quantity' } }));
    await update(t, r.id, { Quantity: '5' });
    expect(await valueOf(t, r.id, 'Label')).toBe('5!');
    // text → number: a text formula over it still works (numbers read as text), and is computed again.
    ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${qty.id}`, { body: { type: 'number' } }));
    expect(await valueOf(t, r.id, 'Label')).toBe('5!');
    await field(t, { name: 'Total', type: 'formula', config: { expression: '{Quantity} * {Price}' } });
    expect(await valueOf(t, r.id, 'Total')).toBe(12.5);
    // number → text would break Total: refused, naming it.
    const res = await c.request('PUT', `/api/v1/tables/${t}/fields/${qty.id}`, { body: { type: 'text' } });
    expect(res.status).toBe(409);
    expect(res.body.msg).toMatch(/"Total"/);
    await expectCurrent(t, 'Label');
  });

  it('changing a definition recomputes every record', async () => {
    const t = await makeTable(c, [{ name: 'X', type: 'number' }]);
    const f = await field(t, { name: 'Y', type: 'formula', config: { expression: '{X} + 1' } });
    const r = await create(t, { X: 1 });
    ok(await c.request('PUT', `/api/v1/tables/${t}/fields/${f.id}`, { body: { config: { expression: '{X} & " items"' } } }));
    expect(await valueOf(t, r.id, 'Y')).toBe('1 items');
  });

  it('a batch of 1,000 writes', async () => {
    const t = await makeTable(c, [{ name: 'N', type: 'number' }]);
    const parent = await makeTable(c, [{ name: 'Name', type: 'text' }, { name: 'Items', type: 'link', config: { table_id: t } }]);
    await field(t, { name: 'Sq', type: 'formula', config: { expression: '{N} * {N}' } });
    await field(parent, { name: 'Sum', type: 'rollup', config: { link_field: 'Items', field: 'Sq', function: 'sum' } });
    const made = ok(await c.request('POST', `/api/v1/tables/${t}/records/batch`, {
      body: { action: 'create', records: Array.from({ length: 1000 }, (_, i) => ({ fields: { N: i } })) },
    })).items as any[];
    const p = await create(parent, { Name: 'p', Items: made.map((r) => r.id) });
    expect(p.fields.Sum).toBe(made.reduce((s, r) => s + r.fields.N ** 2, 0));
    ok(await c.request('POST', `/api/v1/tables/${t}/records/batch`, {
      body: { action: 'update', records: made.map((r) => ({ id: r.id, fields: { N: r.fields.N + 1 } })) },
    }));
    expect(await valueOf(parent, p.id, 'Sum')).toBe(made.reduce((s, r) => s + (r.fields.N + 1) ** 2, 0));
    await expectCurrent(parent, 'Sum');
  });
});

describe('filters, sorts and triggers', () => {
  it('computed values filter and sort as their result type', async () => {
    const t = await makeTable(c, [{ name: 'A', type: 'number' }, { name: 'Tags', type: 'text' }]);
    await field(t, { name: 'Double', type: 'formula', config: { expression: '{A} * 2' }, indexed: true });
    for (const a of [3, 1, 2]) await create(t, { A: a, Tags: `t${a}` });
    const filter = encodeURIComponent(JSON.stringify({ conjunction: 'and', conditions: [{ field: 'Double', operator: 'gt', value: 3 }] }));
    const sort = encodeURIComponent(JSON.stringify([{ field: 'Double', direction: 'desc' }]));
    const page = ok(await c.request('GET', `/api/v1/tables/${t}/records?filter=${filter}&sort=${sort}`));
    expect(page.items.map((r: any) => r.fields.Double)).toEqual([6, 4]);
  });

  it('lookups filter with has_* and show on /graphql like any value', async () => {
    const tags = await makeTable(c, [{ name: 'Tag', type: 'text' }]);
    const posts = await makeTable(c, [{ name: 'Title', type: 'text' }, { name: 'Tags', type: 'link', config: { table_id: tags } }]);
    await field(posts, { name: 'Tag names', type: 'lookup', config: { link_field: 'Tags', field: 'Tag' } });
    await field(posts, { name: 'Tag count', type: 'count', config: { link_field: 'Tags' } });
    const red = await create(tags, { Tag: 'red' });
    const blue = await create(tags, { Tag: 'blue' });
    await create(posts, { Title: 'a', Tags: [red.id, blue.id] });
    await create(posts, { Title: 'b', Tags: [blue.id] });
    await create(posts, { Title: 'c' });
    const filter = (operator: string, value?: unknown) =>
      encodeURIComponent(JSON.stringify({ conjunction: 'and', conditions: [{ field: 'Tag names', operator, value }] }));
    const titles = async (f: string) => ok(await c.request('GET', `/api/v1/tables/${posts}/records?filter=${f}`)).items.map((r: any) => r.fields.Title);
    expect(await titles(filter('has_any', ['red']))).toEqual(['a']);
    expect(await titles(filter('has_all', ['red', 'blue']))).toEqual(['a']);
    expect(await titles(filter('is_empty'))).toEqual(['c']);
    const gql = await c.graphql(`query($t: ID!) { records(tableId: $t) { items { fields } } }`, { t: posts });
    expect(gql.body.data.records.items.map((r: any) => [r.fields['Tag names'], r.fields['Tag count']])).toEqual([[['red', 'blue'], 2], [['blue'], 1], [[], 0]]);
  });

  it('a computed change counts as a change of the record for record_updated triggers', async () => {
    const people = await makeTable(c, [{ name: 'Rate', type: 'number' }]);
    const tasks = await makeTable(c, [{ name: 'Owner', type: 'link', config: { table_id: people } }, { name: 'Note', type: 'text' }]);
    await field(tasks, { name: 'Rate', type: 'lookup', config: { link_field: 'Owner', field: 'Rate' } });
    const wf = ok(await c.request('POST', '/api/v1/workflows', {
      body: {
        name: 'on rate', table_id: tasks, enabled: true, trigger: { type: 'record_updated', config: { fields: ['Rate'] } },
        nodes: [{ id: 'n', type: 'update_record', config: { fields: { Note: 'rate changed' } } }],
      },
    }), 201);
    const person = await create(people, { Rate: 1 });
    const task = await create(tasks, { Owner: [person.id] });
    await update(people, person.id, { Rate: 2 });
    const deadline = Date.now() + 5000;
    let note: unknown = null;
    while (Date.now() < deadline && note !== 'rate changed') {
      note = await valueOf(tasks, task.id, 'Note');
      if (note !== 'rate changed') await new Promise((r) => setTimeout(r, 50));
    }
    expect(note).toBe('rate changed');
    expect(wf.id).toMatch(/^wf/);
  });
});

describe('large tables', () => {
  it('a table that computed fields elsewhere read cannot be deleted (409 naming them)', async () => {
    const people = await makeTable(c, [{ name: 'Rate', type: 'number' }]);
    const tasks = await makeTable(c, [{ name: 'Owner', type: 'link', config: { table_id: people } }]);
    await field(tasks, { name: 'Owners', type: 'count', config: { link_field: 'Owner' } });
    const res = await c.request('DELETE', `/api/v1/tables/${people}`);
    expect(res.status).toBe(409);
    expect(res.body.msg).toMatch(/"Owners"/);
  });

  it('a formula added to a table of more than 10,000 records is computed in the background, showing its progress', async () => {
    const t = await makeTable(c, [{ name: 'N', type: 'number' }]);
    const total = 10_500;
    for (let start = 0; start < total; start += 1000) {
      ok(await c.request('POST', `/api/v1/tables/${t}/records/batch`, {
        body: { action: 'create', records: Array.from({ length: Math.min(1000, total - start) }, (_, i) => ({ fields: { N: start + i } })) },
      }));
    }
    const f = await field(t, { name: 'Double', type: 'formula', config: { expression: '{N} * 2' } });
    expect(f.computing).toMatchObject({ total });
    // Writes during the fill compute their own records at once.
    const first = ok(await c.request('GET', `/api/v1/tables/${t}/records?page_size=1`)).items[0];
    expect((await update(t, first.id, { N: 1000000 })).fields.Double).toBe(2000000);
    const deadline = Date.now() + 60_000;
    let progress: unknown = f.computing;
    while (progress && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      progress = (ok(await c.request('GET', `/api/v1/tables/${t}/fields`)).items as any[]).find((x) => x.id === f.id).computing;
    }
    expect(progress).toBeNull();
    for (let page = 1; page <= Math.ceil(total / 1000); page++) {
      for (const r of ok(await c.request('GET', `/api/v1/tables/${t}/records?page=${page}&page_size=1000`)).items) {
        expect(r.fields.Double).toBe(r.fields.N * 2);
      }
    }
  }, 120_000);
});
