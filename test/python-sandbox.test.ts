// Real runs of plugin Python scripts in the sandbox (bubblewrap + the locked-down interpreter): runtime objects, failure reporting, and the escape suite.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runScript, sandboxStatus, type ScriptOutcome, type ScriptRequest } from '../plugins-runtime/python/runner.js';

// A secret in the host's environment: no run may ever show it.
const SECRET = `s3cret-${process.pid}-${Date.now()}`;
process.env.TABLE_SANDBOX_TEST_SECRET = SECRET;

interface Call { method: string; args: unknown[] }

class HostError extends Error {
  constructor(public code: string, message: string) { super(message); }
}

/** A small in-memory base behind `call`, recording every call. */
function fakeHost(opts: { deny?: string[]; replies?: Record<string, unknown> } = {}) {
  const calls: Call[] = [];
  const records = new Map<string, Record<string, unknown>>([
    ['rec1', { Name: 'Ada', Age: 36 }],
    ['rec2', { Name: 'Grace', Age: 45 }],
    ['rec3', { Name: 'Linus', Age: 28 }],
  ]);
  let next = 4;
  const call = async (method: string, args: unknown[]): Promise<unknown> => {
    calls.push({ method, args });
    if (opts.deny?.includes(method)) throw new HostError('PERMISSION_DENIED', `${method} needs a permission the plugin does not declare`);
    if (opts.replies && method in opts.replies) return opts.replies[method];
    switch (method) {
      case 'list_tables': return [{ id: 'tbl1', name: 'People', description: '' }];
      case 'get_fields': return [{ id: 'fld1', name: 'Name', type: 'text' }, { id: 'fld2', name: 'Age', type: 'number' }];
      case 'list_records': {
        const [, page, perPage] = args as [string, number, number];
        const all = [...records].map(([id, values]) => ({ id, values }));
        return { items: all.slice((page - 1) * perPage, page * perPage), total: all.length };
      }
      case 'get_record': {
        const values = records.get(args[0] as string);
        if (!values) throw new HostError('NOT_FOUND', `record ${String(args[0])} does not exist`);
        return { id: args[0], values };
      }
      case 'create_record': { const id = `rec${next++}`; records.set(id, args[1] as Record<string, unknown>); return { id }; }
      case 'update_record': { records.set(args[0] as string, { ...records.get(args[0] as string), ...(args[1] as object) }); return { id: args[0] }; }
      case 'delete_record': records.delete(args[0] as string); return { deleted: true };
      default: throw new HostError('METHOD_NOT_FOUND', method);
    }
  };
  return { calls, records, call };
}

function py(source: string): Buffer {
  return Buffer.from(source.replace(/^\n/, ''));
}

async function run(main: string, extra: Partial<ScriptRequest> & { more?: Record<string, string> } = {}): Promise<ScriptOutcome> {
  const files = new Map<string, Buffer>([['main.py', py(main)], ['manifest.json', Buffer.from('{"id":"x"}')]]);
  for (const [name, src] of Object.entries(extra.more ?? {})) files.set(name, py(src));
  const host = fakeHost();
  const outcome = await runScript({
    files, entry: 'main.py', timeoutMs: 10_000,
    context: { plugin_id: 'com.example.test', base_id: 'base1', table_id: 'tbl1', params: {} },
    config: { greeting: 'hello' }, request: null, call: host.call,
    ...extra,
  });
  expect(JSON.stringify(outcome)).not.toContain(SECRET);
  return outcome;
}

beforeAll(() => {
  expect(sandboxStatus()).toEqual({ isolation: 'full' });
});

describe('python sandbox: runtime objects', () => {
  it('runs a script whose base calls round-trip to the host, across package modules', async () => {
    const host = fakeHost();
    const outcome = await runScript({
      files: new Map([
        ['main.py', py(`
from lib.people import adults
import json
tables = base.list_tables()
fields = base.get_fields(tables[0]['id'])
page = base.list_records(tables[0]['id'], page=1, per_page=2)
one = base.get_record('rec2')
made = base.create_record(tables[0]['id'], {'Name': 'Alan', 'Age': 41})
base.update_record(made['id'], {'Age': 42})
gone = base.delete_record('rec3')
set_result({'tables': [t['name'] for t in tables], 'fields': [f['name'] for f in fields],
            'page': [r['id'] for r in page['items']], 'total': page['total'], 'one': one['values']['Name'],
            'made': made['id'], 'gone': gone, 'adults': adults(base, tables[0]['id']),
            'config': base.get_config(), 'json': json.dumps({'a': 1})})
`)],
        ['lib/__init__.py', py('')],
        ['lib/people.py', py(`
from .util import names_over


def adults(base, table_id):
    records = base.list_records(table_id, 1, 100)['items']
    return names_over(records, 40)
`)],
        ['lib/util.py', py(`
def names_over(records, age):
    return sorted(r['values']['Name'] for r in records if r['values'].get('Age', 0) > age)
`)],
      ]),
      entry: 'main.py', timeoutMs: 10_000, context: {}, config: { mode: 'strict' }, request: null, call: host.call,
    });
    expect(outcome.error).toBeNull();
    expect(outcome.status).toBe('completed');
    expect(outcome.result).toEqual({
      tables: ['People'], fields: ['Name', 'Age'], page: ['rec1', 'rec2'], total: 3, one: 'Grace', made: 'rec4',
      gone: { deleted: true }, adults: ['Alan', 'Grace'], config: { mode: 'strict' }, json: '{"a": 1}',
    });
    expect(host.calls.map((c) => c.method)).toEqual([
      'list_tables', 'get_fields', 'list_records', 'get_record', 'create_record', 'update_record', 'delete_record', 'list_records',
    ]);
    expect(host.calls[2].args).toEqual(['tbl1', 1, 2]);
    expect(host.calls[4].args).toEqual(['tbl1', { Name: 'Alan', Age: 41 }]);
    expect(host.calls.some((c) => c.method === 'get_config')).toBe(false);   // answered inside the sandbox
    expect(host.records.get('rec4')).toEqual({ Name: 'Alan', Age: 42 });
    expect(outcome.timedOut).toBe(false);
    expect(outcome.durationMs).toBeGreaterThan(0);
  });

  it('keeps print() output and base.log() lines in order', async () => {
    const outcome = await run(`
print('one')
base.log('two')
print('three', end='')
base.log({'four': 4})
print('five\\nsix', 7)
print('sev', 'en', sep='')
base.log('eight')
`);
    expect(outcome.status).toBe('completed');
    expect(outcome.logs).toEqual(['one', 'two', 'three', "{'four': 4}", 'five', 'six 7', 'seven', 'eight']);
  });

  it('takes the result from set_result() or the global `result`', async () => {
    expect((await run('set_result({"n": 5})')).result).toEqual({ n: 5 });
    expect((await run('result = [1, "a", None, True, 2.5]')).result).toEqual([1, 'a', null, true, 2.5]);
    expect((await run('set_result(1)\nresult = 2')).result).toBe(2);
    expect((await run('result = 1\ndef f():\n    set_result(3)\nf()')).result).toBe(3);
    const none = await run('x = 1');
    expect(none.status).toBe('completed');
    expect(none.result).toBeNull();
  });

  it('fails a run whose result has a non-empty error, and keeps the result', async () => {
    const bad = await run('set_result({"error": "no table named Orders", "checked": 3})');
    expect(bad.status).toBe('failed');
    expect(bad.error).toBe('no table named Orders');
    expect(bad.result).toEqual({ error: 'no table named Orders', checked: 3 });
    const fine = await run('set_result({"error": "", "checked": 3})');
    expect(fine.status).toBe('completed');
    expect(fine.error).toBeNull();
  });

  it('fails clearly on a result that is not JSON', async () => {
    const set = await run('set_result({1, 2})');
    expect(set.status).toBe('failed');
    expect(set.error).toMatch(/^the result is not JSON-serialisable: TypeError: Object of type set is not JSON serializable/);
    const nan = await run('set_result(float("nan"))');
    expect(nan.status).toBe('failed');
    expect(nan.error).toMatch(/not JSON-serialisable: ValueError: Out of range float values/);
    const big = await run('set_result("x" * (2 * 1024 * 1024))');
    expect(big.status).toBe('failed');
    expect(big.error).toBe('the result is larger than 1 MiB');
  });

  it('reports an exception as `<Type>: message` with a traceback of package paths only', async () => {
    const outcome = await run(`
from helpers import check
base.log('before')
check(-1)
`, {
      more: { 'helpers.py': `
def check(n):
    if n < 0:
        raise ValueError(f'bad input {n}')
` },
    });
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toBe('ValueError: bad input -1');
    expect(outcome.logs).toEqual(['before']);
    expect(outcome.traceback).toContain('Traceback (most recent call last):');
    expect(outcome.traceback).toContain('File "main.py", line 3, in <module>');
    expect(outcome.traceback).toContain('File "helpers.py", line 3, in check');
    expect(outcome.traceback).toContain("raise ValueError(f'bad input {n}')");
    expect(outcome.traceback).not.toMatch(/\/usr|\/tmp|\/work|<string>|harness/);

    const stdlib = await run('import json\njson.loads("{oops")');
    expect(stdlib.error).toMatch(/^JSONDecodeError: Expecting property name/);
    expect(stdlib.traceback).toContain('File "<stdlib>/json/decoder.py"');
    expect(stdlib.traceback).not.toContain('/usr/lib');

    const syntax = await run('def broken(:\n    pass');
    expect(syntax.status).toBe('failed');
    expect(syntax.error).toMatch(/^SyntaxError: .*\(main\.py, line 1\)/);
  });

  it('raises PermissionDenied with .code for a refused call, and code-prefixed errors for others', async () => {
    const host = fakeHost({ deny: ['create_record'] });
    const caught = await run(`
try:
    base.create_record('tbl1', {'Name': 'x'})
except PermissionDenied as e:
    set_result({'code': e.code, 'text': str(e), 'is_exception': isinstance(e, Exception)})
`, { call: host.call });
    expect(caught.status).toBe('completed');
    expect(caught.result).toEqual({
      code: 'PERMISSION_DENIED', text: 'PERMISSION_DENIED: create_record needs a permission the plugin does not declare', is_exception: true,
    });
    const uncaught = await run("base.create_record('tbl1', {})", { call: fakeHost({ deny: ['create_record'] }).call });
    expect(uncaught.status).toBe('failed');
    expect(uncaught.error).toBe('PermissionDenied: PERMISSION_DENIED: create_record needs a permission the plugin does not declare');
    const missing = await run(`
try:
    base.get_record('nope')
except Exception as e:
    set_result({'text': str(e), 'code': e.code, 'denied': isinstance(e, PermissionDenied)})
`);
    expect(missing.result).toEqual({ text: 'NOT_FOUND: record nope does not exist', code: 'NOT_FOUND', denied: false });
  });

  it('exposes context, config and request', async () => {
    const ordinary = await run('set_result({"context": context, "config": config, "request": request, "is_none": request is None})');
    expect(ordinary.result).toEqual({
      context: { plugin_id: 'com.example.test', base_id: 'base1', table_id: 'tbl1', params: {} },
      config: { greeting: 'hello' }, request: null, is_none: true,
    });
    const endpoint = await run('set_result({"echo": request["payload"]["q"], "endpoint": request["endpoint"], "user": request["user_id"]})', {
      request: { endpoint: 'search', payload: { q: 'ada' }, user_id: 'usr1' },
    });
    expect(endpoint.result).toEqual({ echo: 'ada', endpoint: 'search', user: 'usr1' });
  });

  it('caps messages in both directions', async () => {
    const bigReply = await run(`
try:
    base.list_tables()
except Exception as e:
    set_result(str(e))
`, { call: async () => 'x'.repeat(2 * 1024 * 1024) });
    expect(bigReply.result).toBe('RESPONSE_TOO_LARGE: the answer to list_tables is larger than 1 MiB');
    const bigCall = await run(`
try:
    base.create_record('tbl1', {'Notes': 'y' * (2 * 1024 * 1024)})
except ValueError as e:
    set_result(str(e))
`);
    expect(bigCall.result).toBe('base.create_record(): the request is larger than 1 MiB');
    const badArgs = await run('base.create_record("tbl1", {"when": object()})');
    expect(badArgs.error).toMatch(/^TypeError: base\.create_record\(\): arguments must be JSON values/);
    const longLine = await run('print("z" * 200000)\nprint("y" * 40000, end="")\nprint("y" * 40000)\nbase.log("after")');
    expect(longLine.logs[0]).toHaveLength(64 * 1024 + ' ... [line cut at 64 KiB]'.length);
    expect(longLine.logs[1]).toBe(`${'y'.repeat(64 * 1024)} ... [line cut at 64 KiB]`);
    expect(longLine.logs[2]).toBe('after');
  });

  it('imports the allowed standard modules and uses them', async () => {
    const outcome = await run(`
import json, re, math, datetime, time, random, statistics, decimal, fractions, itertools, functools, collections
import string, textwrap, unicodedata, hashlib, hmac, base64, uuid, typing, dataclasses, enum, copy, operator
import bisect, heapq, csv, io
from collections import Counter, abc


@dataclasses.dataclass(frozen=True)
class Row:
    name: str
    tags: list = dataclasses.field(default_factory=list)


class Color(enum.Enum):
    RED = 1


class Pair(typing.NamedTuple):
    a: int
    b: 'Row'


buf = io.StringIO()
csv.writer(buf).writerow(['a', 1])
out = {
    'json': json.loads('{"x": [1, 2]}')['x'],
    're': re.sub(r'\\d', '#', 'a1b22'),
    'math': math.isqrt(17),
    'date': datetime.datetime.strptime('2024-03-05', '%Y-%m-%d').date().isoformat(),
    'random': random.Random(7).randint(1, 10) <= 10,
    'stats': statistics.median([3, 1, 2]),
    'decimal': str(decimal.Decimal('1.10') + 1),
    'fraction': str(fractions.Fraction(1, 3) * 3),
    'counter': Counter('abca').most_common(1)[0],
    'template': string.Template('$who!').substitute(who='hi'),
    'wrap': textwrap.wrap('aa bb cc', 5),
    'unicode': unicodedata.name('é'),
    'sha': hashlib.sha256(b'x').hexdigest()[:8],
    'hmac': hmac.new(b'k', b'm', 'sha256').hexdigest()[:8],
    'b64': base64.b64encode(b'hi').decode(),
    'uuid': len(str(uuid.uuid4())) + len(str(uuid.uuid5(uuid.NAMESPACE_DNS, 'x'))),
    'hints': sorted(typing.get_type_hints(Pair)),
    'dataclass': dataclasses.asdict(dataclasses.replace(Row('n'), tags=[1])),
    'enum': Color.RED.name,
    'copy': copy.deepcopy({'a': [1]}),
    'op': operator.itemgetter(1)([5, 6]),
    'attrgetter': operator.attrgetter('name')(Row('r')),
    'bisect': bisect.bisect([1, 3, 5], 4),
    'heap': heapq.nsmallest(2, [5, 1, 4]),
    'csv': buf.getvalue().strip(),
    'itertools': list(itertools.accumulate([1, 2, 3])),
    'functools': functools.reduce(operator.mul, [2, 3, 4]),
    'abc': isinstance({}, abc.Mapping),
    'fmt': '{0.name}-{1:%Y}'.format(Row('f'), datetime.date(2020, 1, 1)),
}
set_result(out)
`);
    expect(outcome.error).toBeNull();
    expect(outcome.result).toMatchObject({
      json: [1, 2], re: 'a#b##', math: 4, date: '2024-03-05', random: true, stats: 2, decimal: '2.10', fraction: '1',
      counter: ['a', 2], template: 'hi!', wrap: ['aa bb', 'cc'], unicode: 'LATIN SMALL LETTER E WITH ACUTE',
      sha: '2d711642', b64: 'aGk=', uuid: 72, hints: ['a', 'b'], dataclass: { name: 'n', tags: [1] }, enum: 'RED',
      copy: { a: [1] }, op: 6, attrgetter: 'r', bisect: 2, heap: [1, 4], csv: 'a,1', itertools: [1, 3, 6], functools: 24,
      abc: true, fmt: 'f-2020',
    });
  });

  it('runs several scripts at once without blocking the event loop', async () => {
    let ticks = 0;
    const ticker = setInterval(() => { ticks += 1; }, 10);
    const started = Date.now();
    const outcomes = await Promise.all(Array.from({ length: 6 }, (_, i) => run(`
import time
time.sleep(1)
set_result(${i} + len(base.list_tables()))
`)));
    clearInterval(ticker);
    expect(outcomes.map((o) => o.result)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(Date.now() - started).toBeLessThan(4500);   // 6 x 1 s of sleep, overlapped
    expect(ticks).toBeGreaterThan(20);
  });
});

/** Each escape must fail; `expect` is what the refusal says (the run may not reach its goal either way). */
const ESCAPES: Array<{ name: string; code: string; error: RegExp; timeoutMs?: number }> = [
  { name: 'open /etc/passwd', code: 'set_result(open("/etc/passwd").read())', error: /^SandboxViolation: open\(\) is not allowed/ },
  { name: 'open the package itself', code: 'set_result(open("main.py").read())', error: /^SandboxViolation: open\(\) is not allowed/ },
  { name: 'write a file', code: 'open("/tmp/pwned", "w").write("x")', error: /^SandboxViolation: open\(\) is not allowed/ },
  { name: 'read /proc/self/environ', code: 'set_result(open("/proc/self/environ", "rb").read().decode())', error: /^SandboxViolation: open\(\)/ },
  { name: 'read /proc/1/environ', code: 'set_result(open("/proc/1/environ", "rb").read().decode())', error: /^SandboxViolation: open\(\)/ },
  { name: 'io.open', code: 'import io\nset_result(io.open("/etc/passwd").read())', error: /^AttributeError: module 'io' has no attribute 'open'/ },
  { name: 'io.FileIO', code: 'import io\nset_result(io.FileIO("/etc/passwd").read())', error: /^AttributeError: module 'io' has no attribute 'FileIO'/ },
  { name: 'io.open_code', code: 'import io\nset_result(io.open_code("/etc/passwd").read())', error: /^AttributeError: .*'open_code'/ },
  { name: 'list /', code: 'import os\nset_result(os.listdir("/"))', error: /^ModuleNotFoundError: import of 'os' is not allowed/ },
  { name: 'os.stat', code: 'import os\nset_result(os.stat("/etc/passwd").st_size)', error: /import of 'os' is not allowed/ },
  { name: 'pathlib', code: 'import pathlib\nset_result(pathlib.Path("/etc/passwd").read_text())', error: /import of 'pathlib' is not allowed/ },
  { name: 'os.environ', code: 'import os\nset_result(dict(os.environ))', error: /import of 'os' is not allowed/ },
  { name: 'socket.socket', code: 'import socket\ns = socket.socket()\ns.connect(("1.1.1.1", 80))', error: /import of 'socket' is not allowed/ },
  { name: 'socket.getaddrinfo', code: 'import socket\nset_result(socket.getaddrinfo("example.com", 80))', error: /import of 'socket' is not allowed/ },
  { name: 'urllib', code: 'import urllib.request\nurllib.request.urlopen("http://example.com")', error: /import of 'urllib.request' is not allowed/ },
  { name: 'os.system', code: 'import os\nos.system("id")', error: /import of 'os' is not allowed/ },
  { name: 'subprocess', code: 'import subprocess\nset_result(subprocess.check_output(["id"]).decode())', error: /import of 'subprocess' is not allowed/ },
  { name: 'os.fork', code: 'import os\nos.fork()', error: /import of 'os' is not allowed/ },
  { name: 'os.execv', code: 'import os\nos.execv("/bin/sh", ["sh"])', error: /import of 'os' is not allowed/ },
  { name: 'os.posix_spawn', code: 'import os\nos.posix_spawn("/bin/sh", ["sh"], {})', error: /import of 'os' is not allowed/ },
  { name: '_posixsubprocess', code: 'import _posixsubprocess\nset_result(str(_posixsubprocess))', error: /import of '_posixsubprocess' is not allowed/ },
  { name: 'ctypes', code: 'import ctypes\nctypes.CDLL(None).system(b"id")', error: /import of 'ctypes' is not allowed/ },
  { name: 'importlib.import_module', code: 'import importlib\nset_result(importlib.import_module("os").listdir("/"))', error: /import of 'importlib' is not allowed/ },
  { name: 'importlib.util', code: 'import importlib.util\nset_result(str(importlib.util))', error: /import of 'importlib.util' is not allowed/ },
  { name: '__import__', code: 'set_result(__import__("os").listdir("/"))', error: /^SandboxViolation: the name '__import__' \(main\.py, line 1\)/ },
  { name: 'sys.modules', code: 'import sys\nset_result(sys.modules["os"].listdir("/"))', error: /import of 'sys' is not allowed/ },
  { name: '__builtins__', code: 'set_result(__builtins__["open"]("/etc/passwd").read())', error: /the name '__builtins__'/ },
  { name: 'builtins via globals()', code: 'b = globals()["__builtins__"]\nset_result(b["__import__"]("os").listdir("/"))', error: /import of 'os' is not allowed/ },
  { name: 'imitating a C-level import', code: 'b = globals()["__builtins__"]\nm = b["__import__"]("os", None, None, [], 0)\nm.listdir("/")', error: /^AttributeError: 'NoneType' object has no attribute 'listdir'/ },
  { name: 'print.__self__ (real builtins)', code: 'set_result(print.__self__.open("/etc/passwd").read())', error: /attribute '__self__'/ },
  { name: 'eval / exec', code: 'eval("__import__(\'os\').listdir(\'/\')")', error: /^SandboxViolation: eval\(\) is not allowed/ },
  {
    name: '__subclasses__ walk to os', error: /attribute '__(subclasses|globals|base)__'/,
    code: 'for c in ().__class__.__base__.__subclasses__():\n    if c.__name__ == "_wrap_close":\n        set_result(c.__init__.__globals__["listdir"]("/"))',
  },
  {
    name: '__subclasses__ via getattr', error: /access to attribute '__subclasses__'/,
    code: 'subs = getattr(object, "__sub" + "classes__")()\nfile_io = [c for c in subs if c.__name__ == "FileIO"]\nset_result(file_io[0]("/etc/passwd").read())',
  },
  {
    name: '__subclasses__ via type.__dict__ / vars', error: /vars\(\) of a class or module/,
    code: 'subs = vars(type)["__subclasses__"](object)\nset_result([c.__name__ for c in subs])',
  },
  {
    name: 'string.Formatter attribute walk', error: /access to attribute '__subclasses__'/,
    code: 'import string\nf = string.Formatter()\nsubs = f.get_field("0.__subclasses__", [object], {})[0]()\nset_result(len(subs))',
  },
  {
    name: 'operator.methodcaller walk', error: /access to attribute '__subclasses__'/,
    code: 'import operator\nsubs = operator.methodcaller("__subclasses__")(object)\nset_result(len(subs))',
  },
  {
    name: 'operator.attrgetter to sys', error: /access to attribute '__init__.__globals__'/,
    code: 'import operator, typing\ng = operator.attrgetter("__init__.__globals__")(typing.TypeVar)\nset_result(str(g["sys"]))',
  },
  {
    name: 'functools.update_wrapper copying __globals__', error: /access to attribute '__globals__'/,
    code: 'import functools, uuid\nclass Box: pass\nb = Box()\nfunctools.update_wrapper(b, uuid.uuid4, assigned=("__globals__",), updated=())\nset_result(str(vars(b)))',
  },
  {
    name: 'match/case attribute walk', error: /attribute '__globals__'/,
    code: 'import uuid\nmatch uuid.uuid4:\n    case object(__globals__=g):\n        set_result(str(g["os"]))',
  },
  {
    name: 'generator frame walk to the harness', error: /attribute '(gi_frame|f_back|f_globals)'/,
    code: 'def g():\n    yield 1\nx = g()\nset_result(str(x.gi_frame.f_back.f_globals))',
  },
  {
    name: 'traceback frame walk', error: /attribute '(__traceback__|tb_frame|f_back|f_globals)'/,
    code: 'try:\n    1/0\nexcept Exception as e:\n    set_result(str(e.__traceback__.tb_frame.f_back.f_globals))',
  },
  {
    name: 'typing forward reference evaluated in typing\'s globals', error: /name 'sys' is not defined/,
    code: 'import typing\nT = type("T", (), {"__module__": "typing", "__annotations__": {"a": "sys.modules[\'posix\'].listdir(\'/\')"}})\nset_result(str(typing.get_type_hints(T)))',
  },
  {
    name: 'typing forward reference with dunder walk', error: /attribute '__globals__' \(<string>/,
    code: 'import typing\nfr = typing.ForwardRef("[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == \'_wrap_close\'][0].__init__.__globals__[\'listdir\'](\'/\')")\nclass X:\n    a: fr\nset_result(str(typing.get_type_hints(X)))',
  },
  {
    name: 'dataclass field-name code injection', error: /name 'sys' is not defined/,
    // __eq__ is generated as `(self.a,sys.modules,)==(...)` and executed in the globals of the class's module.
    code: 'import dataclasses\nX = type("X", (), {"__module__": "typing", "a": 1, "__annotations__": {"a,sys.modules": int}})\nD = dataclasses.dataclass(X, init=False, repr=False)\nset_result(str(D() == D()))',
  },
  {
    name: 'writing to the protocol fd', error: /^SandboxViolation: open\(\) is not allowed/,
    code: 'f = open(3, "w")\nf.write(\'{"t": "done", "status": "completed", "result": "forged", "error": null, "traceback": null}\\n\')\nf.flush()',
  },
  {
    name: 'sys.__stdout__', error: /attribute '__stdout__'|import of 'sys' is not allowed/,
    code: 'import sys\nsys.__stdout__.write(\'{"t": "done", "status": "completed", "result": "forged"}\\n\')',
  },
  { name: 'fork bomb', code: 'import os\nwhile True:\n    os.fork()', error: /import of 'os' is not allowed/ },
  { name: 'memory far past the cap', code: 'x = bytearray(4 * 1024 * 1024 * 1024)\nset_result(len(x))', error: /^MemoryError: the script exceeded its memory limit \(256 MiB\)/ },
  { name: 'memory by growth', code: 'chunks = []\nwhile True:\n    chunks.append(b"x" * (8 << 20))', error: /^MemoryError/ },
  { name: 'endless loop', code: 'while True:\n    pass', error: /^TIMEOUT: /, timeoutMs: 1500 },
  { name: 'stdout flood', code: 'while True:\n    print("x" * 1000)', error: /^OUTPUT_LIMIT: / },
];

describe('python sandbox: escape suite (bubblewrap)', () => {
  const outcomes = new Map<string, ScriptOutcome>();

  beforeAll(async () => {
    // In batches: all of them at once would mostly measure this machine's two CPUs.
    for (let i = 0; i < ESCAPES.length; i += 8) {
      const batch = ESCAPES.slice(i, i + 8);
      const results = await Promise.all(batch.map((e) => run(e.code, { timeoutMs: e.timeoutMs ?? 10_000 })));
      batch.forEach((e, j) => outcomes.set(e.name, results[j]));
    }
  }, 60_000);

  for (const escape of ESCAPES) {
    it(`stops: ${escape.name}`, () => {
      const outcome = outcomes.get(escape.name)!;
      expect(outcome.status, JSON.stringify(outcome).slice(0, 500)).toBe('failed');
      expect(outcome.error).toMatch(escape.error);
      expect(outcome.result ?? null).toBeNull();
      expect(JSON.stringify(outcome)).not.toMatch(/root:x:0|forged/);
    });
  }

  it('kills the whole tree on timeout and says so', () => {
    const loop = outcomes.get('endless loop')!;
    expect(loop.timedOut).toBe(true);
    expect(loop.error).toBe('TIMEOUT: the script did not finish within 1.5 s');
    // The outcome is only delivered once the child's pipes closed, i.e. the interpreter is gone (not the 1 s fallback).
    expect(loop.durationMs).toBeLessThan(1500 + 900);
  });

  it('bounds a stdout flood: logs are capped, then the run is killed', () => {
    const flood = outcomes.get('stdout flood')!;
    expect(flood.logs.at(-1)).toBe('[logs truncated: more than 1 MiB of output]');
    expect(flood.logs.slice(0, -1).join('').length).toBeLessThanOrEqual(1 << 20);
    expect(flood.logs[0]).toBe('x'.repeat(1000));
  });

  it('records a caught violation: catching the exception does not complete the run', async () => {
    const outcome = await run(`
try:
    open('/etc/passwd')
except Exception as e:
    print('caught', type(e).__name__)
set_result('continued')
`);
    expect(outcome.logs).toEqual(['caught SandboxViolation']);
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toBe('SandboxViolation: open() is not allowed in plugin scripts');
  });

  it('treats printed protocol lookalikes as plain log lines', async () => {
    const outcome = await run(`
print('{"t": "done", "status": "completed", "result": "forged", "error": null, "traceback": null}')
print('{"t": "call", "id": 1, "m": "delete_record", "a": ["rec1"]}')
set_result('real')
`);
    expect(outcome.status).toBe('completed');
    expect(outcome.result).toBe('real');
    expect(outcome.logs).toHaveLength(2);
  });

  it('keeps serving after the suite', async () => {
    const outcome = await run('set_result(sum(r["values"]["Age"] for r in base.list_records("tbl1", 1, 10)["items"]))');
    expect(outcome.status).toBe('completed');
    expect(outcome.result).toBe(109);
    expect(sandboxStatus().isolation).toBe('full');
  });
});

describe('python sandbox: in-Python layers alone (bubblewrap disabled)', () => {
  const reduced = (code: string) => run(code, { isolation: 'reduced' });

  it('refuses open, sockets, subprocesses and os even without OS isolation', async () => {
    const results = await Promise.all([
      reduced('set_result(open("/etc/passwd").read())'),
      reduced('import socket\nsocket.create_connection(("127.0.0.1", 22))'),
      reduced('import subprocess\nsubprocess.run(["id"])'),
      reduced('import os\nset_result(os.listdir("/"))'),
      reduced('import string\nset_result(len(string.Formatter().get_field("0.__subclasses__", [object], {})[0]()))'),
      reduced('import typing\nT = type("T", (), {"__module__": "typing", "__annotations__": {"a": "sys"}})\nset_result(str(typing.get_type_hints(T)))'),
    ]);
    expect(results.map((o) => o.status)).toEqual(['failed', 'failed', 'failed', 'failed', 'failed', 'failed']);
    expect(results[0].error).toMatch(/^SandboxViolation: open\(\) is not allowed/);
    expect(results[1].error).toMatch(/import of 'socket' is not allowed/);
    expect(results[2].error).toMatch(/import of 'subprocess' is not allowed/);
    expect(results[3].error).toMatch(/import of 'os' is not allowed/);
    expect(results[4].error).toMatch(/access to attribute '__subclasses__'/);
    expect(results[5].error).toMatch(/name 'sys' is not defined/);
    for (const o of results) expect(JSON.stringify(o)).not.toContain('root:x:0');
    const ok = await reduced('set_result(len(base.list_tables()))');
    expect(ok.result).toBe(1);
  });

  it('reports reduced isolation when TABLE_SANDBOX_DISABLE_BWRAP=1 is set at probe time', () => {
    const runner = new URL('../plugins-runtime/python/runner.ts', import.meta.url).pathname;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e',
      `import { sandboxStatus } from ${JSON.stringify(runner)}; console.log(JSON.stringify(sandboxStatus()));`], {
      env: { ...process.env, TABLE_SANDBOX_DISABLE_BWRAP: '1' }, encoding: 'utf8', timeout: 30_000,
    });
    expect(JSON.parse(r.stdout.trim().split('\n').at(-1)!)).toEqual({
      isolation: 'reduced', reason: 'bubblewrap disabled by TABLE_SANDBOX_DISABLE_BWRAP=1',
    });
  });
});

describe('python sandbox: the host survives a misbehaving child', () => {
  // A stand-in interpreter (TABLE_SANDBOX_PYTHON, without bubblewrap) that ignores the harness and writes whatever it
  // likes on the protocol channel: what a script could do if it ever got hold of the real fd.
  let dir = '';
  const previous = process.env.TABLE_SANDBOX_PYTHON;

  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-python-'));
    fs.chmodSync(dir, 0o755);
  });
  afterAll(() => {
    if (previous === undefined) delete process.env.TABLE_SANDBOX_PYTHON;
    else process.env.TABLE_SANDBOX_PYTHON = previous;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function withFake(name: string, shell: string, call?: ScriptRequest['call']): Promise<ScriptOutcome> {
    const file = path.join(dir, name);
    fs.writeFileSync(file, `#!/bin/sh\n${shell}\n`, { mode: 0o755 });
    process.env.TABLE_SANDBOX_PYTHON = file;
    try {
      return await run('set_result(1)', { isolation: 'reduced', timeoutMs: 5000, ...(call ? { call } : {}) });
    } finally {
      delete process.env.TABLE_SANDBOX_PYTHON;
    }
  }

  it('fails malformed, oversized, out-of-order and flooding output and kills the child', async () => {
    const calls: string[] = [];
    const [malformed, oversized, unframed, twoCalls, wrongMethod, flood, silent] = await Promise.all([
      withFake('malformed', "printf 'this is not json\\n'; sleep 5"),
      withFake('oversized', "head -c 2000000 /dev/zero | tr '\\0' 'a'; printf '\\n'; sleep 5"),
      withFake('unframed', "head -c 3000000 /dev/zero | tr '\\0' 'a'; sleep 5"),
      withFake('twocalls', `printf '{"t":"call","id":1,"m":"list_tables","a":[]}\\n{"t":"call","id":2,"m":"delete_record","a":["rec1"]}\\n'; sleep 5`,
        async (m) => { calls.push(m); await new Promise((r) => setTimeout(r, 100)); return []; }),
      withFake('wrongmethod', `printf '{"t":"call","id":1,"m":"drop_database","a":[]}\\n'; sleep 5`),
      withFake('flood', `yes '{"t":"log","l":["flood flood flood flood flood flood flood flood"]}'`),
      withFake('silent', 'exit 0'),
    ]);
    expect(malformed.error).toBe('PROTOCOL_ERROR: malformed message from the script process');
    expect(oversized.error).toBe('PROTOCOL_ERROR: a message from the script exceeds 1 MiB');
    expect(unframed.error).toBe('PROTOCOL_ERROR: a message from the script exceeds 1 MiB');
    expect(twoCalls.error).toBe('PROTOCOL_ERROR: a call arrived while another was in flight');
    expect(calls).toEqual(['list_tables']);
    expect(wrongMethod.error).toBe('PROTOCOL_ERROR: malformed call');
    expect(flood.error).toBe('OUTPUT_LIMIT: the script wrote more than 8 MiB of output');
    expect(flood.logs.at(-1)).toBe('[logs truncated: more than 1 MiB of output]');
    expect(silent.error).toMatch(/^SANDBOX_ERROR: the script process ended without a result \(exit code 0\)/);
    for (const o of [malformed, oversized, unframed, twoCalls, wrongMethod, flood]) {
      expect(o.status).toBe('failed');
      expect(o.durationMs).toBeLessThan(4000);   // killed, not waited for (each fake sleeps 5 s)
    }
    const ok = await run('set_result("still here")');
    expect(ok.result).toBe('still here');
  });
});
