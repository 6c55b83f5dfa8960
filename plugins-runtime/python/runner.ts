// Runs a plugin's Python script in the sandbox (bubblewrap around a locked-down python3) and answers its base.* calls.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { projectPath } from '../../src/project-root.js';

export interface ScriptRequest {
  files: Map<string, Buffer>;          // the package's files (paths relative to the package root)
  entry: string;                        // the .py file to run (script entry or an endpoint's entry)
  timeoutMs: number;                    // kill the whole process tree after this
  context: Record<string, unknown>;     // becomes the global `context` dict
  config: Record<string, unknown>;      // global `config`
  request: Record<string, unknown> | null; // global `request` (None in ordinary runs)
  /** A `base.<method>(...)` call from the script; resolve with a JSON value, or reject with an Error that has `.code` (e.g. 'PERMISSION_DENIED') and a message. */
  call: (method: string, args: unknown[]) => Promise<unknown>;
  memoryBytes?: number;                 // default 256 MiB
  /** 'reduced' skips bubblewrap for this run (tests of the in-Python layers); default: whatever sandboxStatus() found. */
  isolation?: 'auto' | 'reduced';
}

export interface ScriptOutcome {
  status: 'completed' | 'failed';
  result: unknown;        // set_result(v) or the global `result`, JSON-serialisable (non-JSON values -> failed with a clear error)
  error: string | null;   // failed: the result's non-empty `error` value, or `<ExceptionType>: message`, or 'TIMEOUT: ...', or a sandbox/protocol error
  traceback: string | null; // for an exception (file names relative to the package, no host paths)
  logs: string[];         // print() output and base.log() lines, in order (capped, then a truncation note)
  durationMs: number;
  timedOut: boolean;
}

export interface SandboxStatus {
  isolation: 'full' | 'reduced';
  reason?: string;
}

/** Debian's interpreter (the pyenv python3 on PATH lives under /root, which the sandbox does not see). */
const DEFAULT_PYTHON = '/usr/bin/python3';
const BWRAP = '/usr/bin/bwrap';
const PYTHON_ARGS = ['-I', '-S', '-B'];
/** uid/gid the sandbox runs as when the service runs as root: RLIMIT_NPROC does not bind root, and nobody owns nothing. */
const NOBODY = 65534;

const MAX_MESSAGE = 1 << 20;          // per protocol line, both directions
const MAX_SOURCES = 32 << 20;         // .py bytes sent in the job message
const LOG_CAP = 1 << 20;              // characters of logs kept
const OUTPUT_CAP = 8 << 20;           // bytes the child may write in all before it is killed
const STDERR_TAIL = 4096;
const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MEMORY = 256 << 20;
const DATA_METHODS = new Set([
  'list_tables', 'get_fields', 'list_records', 'get_record', 'create_record', 'update_record', 'delete_record',
]);

const HARNESS = readFileSync(projectPath('plugins-runtime', 'python', 'harness.py'), 'utf8');

let probed: SandboxStatus | null = null;

/** `TABLE_SANDBOX_PYTHON` overrides the interpreter (read on every run); inside bubblewrap it must live under /usr. */
function pythonPath(): string {
  return process.env.TABLE_SANDBOX_PYTHON || DEFAULT_PYTHON;
}

// Compiling the harness costs 10-20 ms per run, so it is compiled once by the same interpreter and passed as marshal
// data. Only for interpreters under /usr (the only ones bubblewrap can run): anything else gets the source.
const COMPILE_HARNESS = 'import sys, marshal; sys.stdout.buffer.write(marshal.dumps(compile(sys.stdin.read(), "<harness>", "exec")))';
const MAX_ARG = 120_000;   // below Linux's 128 KiB limit for one argument
let compiled: { key: string; code: string } | null = null;

function harnessCode(python: string): string {
  if (!python.startsWith('/usr/')) return HARNESS;
  let key = python;
  try {
    const st = statSync(python);
    key = `${python}:${st.size}:${st.mtimeMs}`;   // marshal data only fits the interpreter build that wrote it
  } catch { return HARNESS; }
  if (compiled?.key !== key) {
    const r = spawnSync(python, [...PYTHON_ARGS, '-c', COMPILE_HARNESS], {
      input: HARNESS, env: {}, timeout: 15_000, maxBuffer: 1 << 20, stdio: ['pipe', 'pipe', 'ignore'],
    });
    const b64 = r.status === 0 && r.stdout?.length ? r.stdout.toString('base64') : '';
    const code = `import marshal, binascii; exec(marshal.loads(binascii.a2b_base64(b'${b64}')))`;
    compiled = { key, code: b64 && code.length <= MAX_ARG ? code : HARNESS };
  }
  return compiled.code;
}

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
/** Whether bubblewrap starts as nobody when the service is root (decided by the probe; some kernels refuse user
 * namespaces to unprivileged users, and then bubblewrap runs as root inside its own user namespace). */
let bwrapAsNobody = isRoot;

function runAs(withBwrap: boolean): { uid?: number; gid?: number } {
  const drop = withBwrap ? bwrapAsNobody : isRoot;
  return drop ? { uid: NOBODY, gid: NOBODY } : {};
}

/** bubblewrap arguments: every namespace unshared, an empty environment and only /usr (read-only) plus the /lib* links. */
function bwrapArgs(): string[] {
  const args = [
    '--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session',
    '--cap-drop', 'ALL', '--clearenv', '--hostname', 'sandbox',
    '--ro-bind', '/usr', '/usr',
  ];
  // Merged-/usr systems have /lib* as symlinks (the ELF interpreter is /lib64/ld-linux...); older ones have directories.
  for (const dir of ['/lib', '/lib64', '/lib32', '/libx32']) {
    let st;
    try { st = lstatSync(dir); } catch { continue; }
    if (st.isSymbolicLink()) args.push('--symlink', readlinkSync(dir), dir);
    else if (st.isDirectory()) args.push('--ro-bind', dir, dir);
  }
  args.push('--remount-ro', '/', '--chdir', '/');
  return args;
}

/**
 * Whether bubblewrap can start python here (probed once, synchronously, then cached). `TABLE_SANDBOX_DISABLE_BWRAP=1`
 * (read at probe time) forces the reduced mode, where only the in-Python layers and resource limits apply.
 */
export function sandboxStatus(): SandboxStatus {
  if (probed) return probed;
  if (process.env.TABLE_SANDBOX_DISABLE_BWRAP === '1') {
    probed = { isolation: 'reduced', reason: 'bubblewrap disabled by TABLE_SANDBOX_DISABLE_BWRAP=1' };
  } else if (!existsSync(BWRAP)) {
    probed = { isolation: 'reduced', reason: `bubblewrap is not installed (${BWRAP} is missing)` };
  } else if (!existsSync(pythonPath())) {
    probed = { isolation: 'reduced', reason: `${pythonPath()} is missing` };
  } else {
    const probe = () => spawnSync(BWRAP, [...bwrapArgs(), pythonPath(), ...PYTHON_ARGS, '-c', 'pass'], {
      env: {}, timeout: 15_000, stdio: ['ignore', 'ignore', 'pipe'], ...runAs(true),
    });
    let r = probe();
    if (r.status !== 0 && bwrapAsNobody) {
      bwrapAsNobody = false;
      r = probe();
    }
    if (r.status === 0) probed = { isolation: 'full' };
    else {
      const why = r.error ? r.error.message : (r.stderr?.toString('utf8').trim() || `exit status ${r.status}`);
      probed = { isolation: 'reduced', reason: `bubblewrap cannot start: ${why.slice(0, 300)}` };
    }
  }
  harnessCode(pythonPath());   // compile the harness now (once), not during the first run
  return probed;
}

function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code ? code : 'ERROR';
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return typeof err === 'string' ? err : 'the host call failed';
}

/** Python-style truthiness of a JSON value: the spec fails a run whose result has a non-empty `error`. */
function truthy(v: unknown): boolean {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v as object).length > 0;
  return true;
}

function failed(error: string, startedAt: number, logs: string[] = [], timedOut = false): ScriptOutcome {
  return { status: 'failed', result: null, error, traceback: null, logs, durationMs: performance.now() - startedAt, timedOut };
}

/** Runs one script. Never rejects: every problem becomes a failed outcome. */
export function runScript(req: ScriptRequest): Promise<ScriptOutcome> {
  const startedAt = performance.now();
  const status = sandboxStatus();
  const useBwrap = status.isolation === 'full' && req.isolation !== 'reduced';

  if (!req.entry.endsWith('.py') || !req.files.has(req.entry)) {
    return Promise.resolve(failed(`SANDBOX_ERROR: entry ${JSON.stringify(req.entry)} is not a .py file of the package`, startedAt));
  }
  const sources: Record<string, string> = {};
  let sourceBytes = 0;
  for (const [path, data] of req.files) {
    if (!path.endsWith('.py')) continue;       // the script cannot open files, so only code is sent
    if (path.startsWith('/') || path.split('/').some((p) => p === '..' || p === '' || p === '.') || path.includes('\\')) continue;
    sourceBytes += data.length;
    sources[path] = data.toString('base64');
  }
  if (sourceBytes > MAX_SOURCES) {
    return Promise.resolve(failed(`SANDBOX_ERROR: the package's Python sources exceed ${MAX_SOURCES >> 20} MiB`, startedAt));
  }
  const timeoutMs = Number.isFinite(req.timeoutMs) && req.timeoutMs > 0 ? req.timeoutMs : DEFAULT_TIMEOUT_MS;
  const memory = req.memoryBytes && req.memoryBytes > 0 ? Math.floor(req.memoryBytes) : DEFAULT_MEMORY;
  let job: string;
  try {
    job = JSON.stringify({
      files: sources, entry: req.entry, context: req.context ?? {}, config: req.config ?? {}, request: req.request ?? null,
      limits: { memory, cpu: Math.ceil(timeoutMs / 1000) + 2, wall: Math.ceil(timeoutMs / 1000) + 5 },
    });
  } catch (e) {
    return Promise.resolve(failed(`SANDBOX_ERROR: context/config/request are not JSON (${errorMessage(e)})`, startedAt));
  }

  return new Promise<ScriptOutcome>((resolve) => {
    const pyArgs = [...PYTHON_ARGS, '-c', harnessCode(pythonPath())];
    let child: ChildProcess;
    try {
      // detached: the child leads a new process group, so one kill(-pid) reaches everything it started.
      const options: SpawnOptions = { env: {}, cwd: '/', detached: true, stdio: ['pipe', 'pipe', 'pipe'], ...runAs(useBwrap) };
      child = useBwrap
        ? spawn(BWRAP, [...bwrapArgs(), pythonPath(), ...pyArgs], options)
        : spawn(pythonPath(), pyArgs, options);
    } catch (e) {
      resolve(failed(`SANDBOX_ERROR: cannot start python (${errorMessage(e)})`, startedAt));
      return;
    }

    const logs: string[] = [];
    let logChars = 0;
    let logsCut = false;
    let outputBytes = 0;
    let stderrTail = '';
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let callInFlight = false;
    let expectedCall = 1;
    let outcome: ScriptOutcome | null = null;
    let reaped = false;     // 'exit' seen: the pid may be reused from now on, so never signal it again
    let closed = false;     // 'close' seen (or given up waiting): all output has been read
    let resolved = false;

    const killTree = () => {
      if (reaped || child.pid === undefined) return;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
    };
    const settle = () => {
      if (resolved || !outcome || !closed) return;
      resolved = true;
      outcome.durationMs = performance.now() - startedAt;
      resolve(outcome);
    };
    const finish = (o: Omit<ScriptOutcome, 'durationMs' | 'logs'>) => {
      if (outcome) return;
      clearTimeout(timer);
      outcome = { ...o, logs, durationMs: 0 };
      killTree();
      child.stdout?.removeAllListeners('data');
      child.stdout?.resume();
      settle();
    };
    const fail = (error: string, timedOut = false) =>
      finish({ status: 'failed', result: null, error, traceback: null, timedOut });

    const timer = setTimeout(() => {
      fail(`TIMEOUT: the script did not finish within ${timeoutMs / 1000} s`, true);
    }, timeoutMs);

    const addLog = (line: string) => {
      if (logsCut) return;
      if (logChars + line.length > LOG_CAP) {
        logsCut = true;
        logs.push(`[logs truncated: more than ${LOG_CAP >> 20} MiB of output]`);
        return;
      }
      logChars += line.length;
      logs.push(line);
    };

    const reply = (id: number, method: string, body: Record<string, unknown>) => {
      if (outcome) return;
      let text: string;
      try {
        text = JSON.stringify({ id, ...body });
      } catch (e) {
        text = JSON.stringify({ id, ok: false, code: 'INTERNAL', message: `the host's answer is not JSON (${errorMessage(e)})` });
      }
      if (Buffer.byteLength(text) > MAX_MESSAGE) {
        text = JSON.stringify({ id, ok: false, code: 'RESPONSE_TOO_LARGE', message: `the answer to ${method} is larger than 1 MiB` });
      }
      callInFlight = false;
      child.stdin?.write(text + '\n');
    };

    const onMessage = (line: Buffer) => {
      let msg: unknown;
      try {
        msg = JSON.parse(line.toString('utf8'));
      } catch {
        return fail('PROTOCOL_ERROR: malformed message from the script process');
      }
      if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return fail('PROTOCOL_ERROR: malformed message from the script process');
      const m = msg as Record<string, unknown>;
      switch (m.t) {
        case 'log': {
          if (!Array.isArray(m.l) || !m.l.every((s) => typeof s === 'string')) return fail('PROTOCOL_ERROR: malformed log message');
          for (const s of m.l as string[]) addLog(s);
          return;
        }
        case 'call': {
          // Strictly one call at a time, numbered 1, 2, ...: a flood of forged calls cannot fan out on the host.
          if (callInFlight) return fail('PROTOCOL_ERROR: a call arrived while another was in flight');
          if (m.id !== expectedCall) return fail('PROTOCOL_ERROR: unexpected call id');
          if (typeof m.m !== 'string' || !DATA_METHODS.has(m.m) || !Array.isArray(m.a)) return fail('PROTOCOL_ERROR: malformed call');
          expectedCall += 1;
          callInFlight = true;
          const id = m.id as number;
          const method = m.m;
          let p: Promise<unknown>;
          try { p = Promise.resolve(req.call(method, m.a as unknown[])); } catch (e) { p = Promise.reject(e); }
          p.then(
            (v) => reply(id, method, { ok: true, v: v === undefined ? null : v }),
            (e) => reply(id, method, { ok: false, code: errorCode(e), message: errorMessage(e) }),
          );
          return;
        }
        case 'done': {
          const st = m.status;
          if ((st !== 'completed' && st !== 'failed') || !(m.error === null || typeof m.error === 'string')
            || !(m.traceback === null || typeof m.traceback === 'string')) return fail('PROTOCOL_ERROR: malformed result message');
          const result = m.result === undefined ? null : m.result;
          let status: 'completed' | 'failed' = st;
          let error = m.error as string | null;
          if (status === 'completed' && result && typeof result === 'object' && !Array.isArray(result)
            && truthy((result as Record<string, unknown>).error)) {
            const e = (result as Record<string, unknown>).error;
            status = 'failed';
            error = typeof e === 'string' ? e : JSON.stringify(e);
          }
          if (status === 'failed' && !error) error = 'failed';
          if (status === 'completed') error = null;
          return finish({ status, result, error, traceback: m.traceback as string | null, timedOut: false });
        }
        default:
          return fail('PROTOCOL_ERROR: unknown message from the script process');
      }
    };

    const countOutput = (n: number): boolean => {
      outputBytes += n;
      if (outputBytes > OUTPUT_CAP) {
        fail(`OUTPUT_LIMIT: the script wrote more than ${OUTPUT_CAP >> 20} MiB of output`);
        return false;
      }
      return true;
    };

    child.stdout!.on('data', (chunk: Buffer) => {
      if (outcome || !countOutput(chunk.length)) return;
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        if (nl === -1) break;
        const piece = chunk.subarray(start, nl);
        if (pendingBytes + piece.length > MAX_MESSAGE) return fail('PROTOCOL_ERROR: a message from the script exceeds 1 MiB');
        const line = pending.length ? Buffer.concat([...pending, piece]) : piece;
        pending = [];
        pendingBytes = 0;
        start = nl + 1;
        onMessage(line);
        if (outcome) return;
      }
      if (start < chunk.length) {
        const rest = chunk.subarray(start);
        pendingBytes += rest.length;
        if (pendingBytes > MAX_MESSAGE) return fail('PROTOCOL_ERROR: a message from the script exceeds 1 MiB');
        pending.push(Buffer.from(rest));   // copy: the chunk's memory is reused by the stream
      }
    });
    // stderr carries only interpreter noise (and whatever still writes to fd 1): counted and kept short for diagnostics.
    child.stderr!.on('data', (chunk: Buffer) => {
      if (outcome) return;
      if (!countOutput(chunk.length)) return;
      stderrTail = (stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.stdin!.on('error', () => { /* the child may be gone before it reads everything: EPIPE is expected */ });
    // 'exit' can come before the last stdout data has been read; 'close' (all stdio closed) ends the run. Should
    // something keep the pipes open after the process is gone, stop waiting after a moment.
    let exitInfo = 'no exit status';
    let exitSignal: NodeJS.Signals | null = null;
    let closeWait: NodeJS.Timeout | undefined;
    const ended = () => {
      if (closed) return;
      closed = true;
      clearTimeout(closeWait);
      if (!outcome) {
        if (exitSignal === 'SIGXCPU' || exitSignal === 'SIGALRM') fail('TIMEOUT: the script ran past its time limit', true);
        else {
          const tail = stderrTail.trim().split('\n').slice(-3).join(' | ');
          fail(`SANDBOX_ERROR: the script process ended without a result (${exitInfo})${tail ? `: ${tail.slice(0, 500)}` : ''}`);
        }
      }
      settle();
    };
    child.on('error', (e) => {
      // Could not spawn: no 'exit' follows.
      reaped = true;
      fail(`SANDBOX_ERROR: cannot start the sandbox (${e.message})`);
      ended();
    });
    child.on('exit', (code, signal) => {
      reaped = true;
      exitSignal = signal;
      exitInfo = signal ? `signal ${signal}` : `exit code ${code}`;
      closeWait = setTimeout(ended, 1000);
    });
    child.on('close', ended);

    child.stdin!.write(job + '\n');
  });
}
