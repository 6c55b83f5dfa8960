// Runs a plugin's Python script in the sandbox and answers its base.* calls over the harness's stdio protocol, within caps.
import type { ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { sandboxStatus, spawnInterpreter } from './sandbox.js';

export { sandboxStatus, type SandboxStatus } from './sandbox.js';

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

/** The job message (the first line on stdin), or the reason the script cannot run at all. */
function buildJob(req: ScriptRequest, timeoutMs: number): { job: string } | { error: string } {
  if (!req.entry.endsWith('.py') || !req.files.has(req.entry)) {
    return { error: `SANDBOX_ERROR: entry ${JSON.stringify(req.entry)} is not a .py file of the package` };
  }
  const sources: Record<string, string> = {};
  let sourceBytes = 0;
  for (const [path, data] of req.files) {
    if (!path.endsWith('.py')) continue;       // the script cannot open files, so only code is sent
    if (path.startsWith('/') || path.split('/').some((p) => p === '..' || p === '' || p === '.') || path.includes('\\')) continue;
    sourceBytes += data.length;
    sources[path] = data.toString('base64');
  }
  if (sourceBytes > MAX_SOURCES) return { error: `SANDBOX_ERROR: the package's Python sources exceed ${MAX_SOURCES >> 20} MiB` };
  const memory = req.memoryBytes && req.memoryBytes > 0 ? Math.floor(req.memoryBytes) : DEFAULT_MEMORY;
  try {
    return {
      job: JSON.stringify({
        files: sources, entry: req.entry, context: req.context ?? {}, config: req.config ?? {}, request: req.request ?? null,
        limits: { memory, cpu: Math.ceil(timeoutMs / 1000) + 2, wall: Math.ceil(timeoutMs / 1000) + 5 },
      }),
    };
  } catch (e) {
    return { error: `SANDBOX_ERROR: context/config/request are not JSON (${errorMessage(e)})` };
  }
}

type Finished = Omit<ScriptOutcome, 'durationMs' | 'logs'>;

/**
 * One run of one script: the interpreter process, the newline-delimited JSON protocol on its stdio and the caps, from
 * start to a settled outcome. The outcome is fixed once (finish) and handed over once the pipes have closed (settle).
 */
class ScriptSession {
  private child!: ChildProcess;
  private timer: NodeJS.Timeout | undefined;
  private readonly logs: string[] = [];
  private logChars = 0;
  private logsCut = false;
  private outputBytes = 0;
  private stderrTail = '';
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private callInFlight = false;
  private expectedCall = 1;
  private outcome: ScriptOutcome | null = null;
  private reaped = false;     // 'exit' seen: the pid may be reused from now on, so never signal it again
  private closed = false;     // 'close' seen (or given up waiting): all output has been read
  private resolved = false;
  private exitInfo = 'no exit status';
  private exitSignal: NodeJS.Signals | null = null;
  private closeWait: NodeJS.Timeout | undefined;

  constructor(
    private readonly req: ScriptRequest,
    private readonly startedAt: number,
    private readonly timeoutMs: number,
    private readonly resolve: (outcome: ScriptOutcome) => void,
  ) {}

  /** Starts the interpreter, arms the timeout, wires its pipes and sends the job. */
  start(useBwrap: boolean, job: string): void {
    try {
      this.child = spawnInterpreter(useBwrap);
    } catch (e) {
      this.resolve(failed(`SANDBOX_ERROR: cannot start python (${errorMessage(e)})`, this.startedAt));
      return;
    }
    const child = this.child;
    this.timer = setTimeout(() => this.timeOut(), this.timeoutMs);
    child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
    // stderr carries only interpreter noise (and whatever still writes to fd 1): counted and kept short for diagnostics.
    child.stderr!.on('data', (chunk: Buffer) => {
      if (this.outcome || !this.countOutput(chunk.length)) return;
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.stdin!.on('error', () => { /* the child may be gone before it reads everything: EPIPE is expected */ });
    child.on('error', (e) => {
      // Could not spawn: no 'exit' follows.
      this.reaped = true;
      this.fail(`SANDBOX_ERROR: cannot start the sandbox (${e.message})`);
      this.ended();
    });
    // 'exit' can come before the last stdout data has been read; 'close' (all stdio closed) ends the run. Should
    // something keep the pipes open after the process is gone, stop waiting after a moment.
    child.on('exit', (code, signal) => {
      this.reaped = true;
      this.exitSignal = signal;
      this.exitInfo = signal ? `signal ${signal}` : `exit code ${code}`;
      this.closeWait = setTimeout(() => this.ended(), 1000);
    });
    child.on('close', () => this.ended());
    this.send(job);
  }

  /** One protocol line to the script. */
  private send(line: string): void {
    this.child.stdin?.write(line + '\n');
  }

  /** The answer to a base.* call, capped at one message; nothing once the run has an outcome. */
  private reply(id: number, method: string, body: Record<string, unknown>): void {
    if (this.outcome) return;
    let text: string;
    try {
      text = JSON.stringify({ id, ...body });
    } catch (e) {
      text = JSON.stringify({ id, ok: false, code: 'INTERNAL', message: `the host's answer is not JSON (${errorMessage(e)})` });
    }
    if (Buffer.byteLength(text) > MAX_MESSAGE) {
      text = JSON.stringify({ id, ok: false, code: 'RESPONSE_TOO_LARGE', message: `the answer to ${method} is larger than 1 MiB` });
    }
    this.callInFlight = false;
    this.send(text);
  }

  /** Splits stdout into protocol lines, each at most one message long. */
  private receive(chunk: Buffer): void {
    if (this.outcome || !this.countOutput(chunk.length)) return;
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) break;
      const piece = chunk.subarray(start, nl);
      if (this.pendingBytes + piece.length > MAX_MESSAGE) return this.fail('PROTOCOL_ERROR: a message from the script exceeds 1 MiB');
      const line = this.pending.length ? Buffer.concat([...this.pending, piece]) : piece;
      this.pending = [];
      this.pendingBytes = 0;
      start = nl + 1;
      this.handleMessage(line);
      if (this.outcome) return;
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > MAX_MESSAGE) return this.fail('PROTOCOL_ERROR: a message from the script exceeds 1 MiB');
      this.pending.push(Buffer.from(rest));   // copy: the chunk's memory is reused by the stream
    }
  }

  /** One message from the harness: log lines, a base.* call, or the result. Anything else ends the run. */
  private handleMessage(line: Buffer): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line.toString('utf8'));
    } catch {
      return this.fail('PROTOCOL_ERROR: malformed message from the script process');
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return this.fail('PROTOCOL_ERROR: malformed message from the script process');
    const m = msg as Record<string, unknown>;
    switch (m.t) {
      case 'log':
        if (!Array.isArray(m.l) || !m.l.every((s) => typeof s === 'string')) return this.fail('PROTOCOL_ERROR: malformed log message');
        for (const s of m.l as string[]) this.addLog(s);
        return;
      case 'call':
        return this.handleCall(m);
      case 'done':
        return this.handleDone(m);
      default:
        return this.fail('PROTOCOL_ERROR: unknown message from the script process');
    }
  }

  /** Strictly one call at a time, numbered 1, 2, ...: a flood of forged calls cannot fan out on the host. */
  private handleCall(m: Record<string, unknown>): void {
    if (this.callInFlight) return this.fail('PROTOCOL_ERROR: a call arrived while another was in flight');
    if (m.id !== this.expectedCall) return this.fail('PROTOCOL_ERROR: unexpected call id');
    if (typeof m.m !== 'string' || !DATA_METHODS.has(m.m) || !Array.isArray(m.a)) return this.fail('PROTOCOL_ERROR: malformed call');
    this.expectedCall += 1;
    this.callInFlight = true;
    const id = m.id as number;
    const method = m.m;
    let p: Promise<unknown>;
    try { p = Promise.resolve(this.req.call(method, m.a as unknown[])); } catch (e) { p = Promise.reject(e); }
    p.then(
      (v) => this.reply(id, method, { ok: true, v: v === undefined ? null : v }),
      (e) => this.reply(id, method, { ok: false, code: errorCode(e), message: errorMessage(e) }),
    );
  }

  /** The script's end: a result with a non-empty `error` is a failed run too. */
  private handleDone(m: Record<string, unknown>): void {
    const st = m.status;
    if ((st !== 'completed' && st !== 'failed') || !(m.error === null || typeof m.error === 'string')
      || !(m.traceback === null || typeof m.traceback === 'string')) return this.fail('PROTOCOL_ERROR: malformed result message');
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
    this.finish({ status, result, error, traceback: m.traceback as string | null, timedOut: false });
  }

  /** Cap: logs keep at most LOG_CAP characters, then one truncation note. */
  private addLog(line: string): void {
    if (this.logsCut) return;
    if (this.logChars + line.length > LOG_CAP) {
      this.logsCut = true;
      this.logs.push(`[logs truncated: more than ${LOG_CAP >> 20} MiB of output]`);
      return;
    }
    this.logChars += line.length;
    this.logs.push(line);
  }

  /** Cap: the child may write OUTPUT_CAP bytes in all (stdout and stderr); past it the run fails and the child dies. */
  private countOutput(n: number): boolean {
    this.outputBytes += n;
    if (this.outputBytes > OUTPUT_CAP) {
      this.fail(`OUTPUT_LIMIT: the script wrote more than ${OUTPUT_CAP >> 20} MiB of output`);
      return false;
    }
    return true;
  }

  private timeOut(): void {
    this.fail(`TIMEOUT: the script did not finish within ${this.timeoutMs / 1000} s`, true);
  }

  private fail(error: string, timedOut = false): void {
    this.finish({ status: 'failed', result: null, error, traceback: null, timedOut });
  }

  /** Fixes the outcome (the first one wins), kills the process group and drains what is left of stdout. */
  private finish(o: Finished): void {
    if (this.outcome) return;
    clearTimeout(this.timer);
    this.outcome = { ...o, logs: this.logs, durationMs: 0 };
    this.killTree();
    this.child.stdout?.removeAllListeners('data');
    this.child.stdout?.resume();
    this.settle();
  }

  private killTree(): void {
    if (this.reaped || this.child.pid === undefined) return;
    try { process.kill(-this.child.pid, 'SIGKILL'); } catch { /* already gone */ }
  }

  /** The pipes have closed: a run that ended without a result failed (a CPU or wall-clock signal is a timeout). */
  private ended(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.closeWait);
    if (!this.outcome) {
      if (this.exitSignal === 'SIGXCPU' || this.exitSignal === 'SIGALRM') this.fail('TIMEOUT: the script ran past its time limit', true);
      else {
        const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
        this.fail(`SANDBOX_ERROR: the script process ended without a result (${this.exitInfo})${tail ? `: ${tail.slice(0, 500)}` : ''}`);
      }
    }
    this.settle();
  }

  /** Hands the outcome over once, when it is fixed and all output has been read. */
  private settle(): void {
    if (this.resolved || !this.outcome || !this.closed) return;
    this.resolved = true;
    this.outcome.durationMs = performance.now() - this.startedAt;
    this.resolve(this.outcome);
  }
}

/** Runs one script. Never rejects: every problem becomes a failed outcome. */
export function runScript(req: ScriptRequest): Promise<ScriptOutcome> {
  const startedAt = performance.now();
  const useBwrap = sandboxStatus().isolation === 'full' && req.isolation !== 'reduced';
  const timeoutMs = Number.isFinite(req.timeoutMs) && req.timeoutMs > 0 ? req.timeoutMs : DEFAULT_TIMEOUT_MS;
  const prepared = buildJob(req, timeoutMs);
  if ('error' in prepared) return Promise.resolve(failed(prepared.error, startedAt));
  return new Promise<ScriptOutcome>((resolve) => new ScriptSession(req, startedAt, timeoutMs, resolve).start(useBwrap, prepared.job));
}
