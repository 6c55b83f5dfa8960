// Where plugin scripts run: the interpreter, bubblewrap and its probe (full or reduced isolation), the compiled harness.
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { projectPath } from '../../src/project-root.js';

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

/**
 * Starts the harness in a fresh interpreter, inside bubblewrap when `withBwrap`. Detached: the child leads a new
 * process group, so one kill(-pid) reaches everything it started. Throws when it cannot be spawned at all.
 */
export function spawnInterpreter(withBwrap: boolean): ChildProcess {
  const pyArgs = [...PYTHON_ARGS, '-c', harnessCode(pythonPath())];
  const options: SpawnOptions = { env: {}, cwd: '/', detached: true, stdio: ['pipe', 'pipe', 'pipe'], ...runAs(withBwrap) };
  return withBwrap ? spawn(BWRAP, [...bwrapArgs(), pythonPath(), ...pyArgs], options) : spawn(pythonPath(), pyArgs, options);
}
