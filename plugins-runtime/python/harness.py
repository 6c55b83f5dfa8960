# Sandbox harness for plugin scripts: run by `python3 -I -S -B -c` (runner.ts), it reads one job from stdin, locks the interpreter down, runs the plugin and reports.
#
# runner.ts compiles this file once with the same interpreter and passes the marshalled code on the command line.
#
# Protocol (newline-delimited JSON, at most 1 MiB a line after the first):
#   host -> harness, stdin:  first line {"files": {path: base64}, "entry", "context", "config", "request", "limits"},
#                            then one reply per call: {"id", "ok": true, "v"} or {"id", "ok": false, "code", "message"}
#   harness -> host, a private copy of the original stdout:
#                            {"t": "log", "l": [line, ...]}, {"t": "call", "id", "m", "a"}, {"t": "done", "status", "result", "error", "traceback"}
#
# Order of work: everything that touches the file system (reading the job, importing the modules the plugin names) happens
# first; then the limits are set, the dangerous functions of posix/os/_imp/_thread/_signal are replaced by stubs, and an
# audit hook that refuses every event but a few harmless ones is installed. From then on nothing is opened or imported, so
# the hook needs no exceptions for the interpreter's own imports. The hook's decisions are constants in its own code and
# the interpreter's hook list is the only reference to it, so plugin code cannot switch it off even if some
# standard-library gadget hands it harness objects.
#
# Layers in front of that backstop, so that the usual escapes fail early and with a clear message: a source check of the
# plugin's files (and of everything compiled later) that refuses dunder and frame attributes, builtins without
# open/eval/exec/compile and with checked getattr & co, and an import allow-list that hands out public-only module views.
import sys
import posix
import builtins
import resource
import binascii
import _json
import _ast
import _io
import _string
from time import monotonic


def _harness():
    MAX_MSG = 1 << 20             # per protocol line, both directions
    MAX_START = 48 << 20          # the first line carries the package's .py files
    MAX_LOG_LINE = 64 << 10       # one print() line; longer lines are cut
    FLUSH_BYTES = 16 << 10        # batch log lines, but not for long: a killed run keeps what it printed
    FLUSH_SECONDS = 0.02

    # The modules plugin code may import (spec: at least these). Their submodules with public names come along.
    ALLOWED = frozenset((
        'json', 're', 'math', 'datetime', 'time', 'random', 'statistics', 'decimal', 'fractions', 'itertools',
        'functools', 'collections', 'string', 'textwrap', 'unicodedata', 'hashlib', 'hmac', 'base64', 'uuid', 'typing',
        'dataclasses', 'enum', 'copy', 'operator', 'bisect', 'heapq', 'csv', 'io',
    ))
    # Modules that allowed modules import inside functions: they must be loaded before the lockdown.
    LAZY_DEPS = {
        're': ('warnings', 'unicodedata'), 'enum': ('warnings',), 'datetime': ('_strptime',), 'time': ('_strptime',),
        'collections': ('heapq', 'copy'), 'functools': ('types', 'weakref', 'typing'), 'uuid': ('random', 'hashlib'),
        'fractions': ('decimal',), 'statistics': ('_statistics',),
        'hashlib': ('warnings', '_md5', '_sha1', '_sha256', '_sha512', '_blake2', '_sha3'),
    }
    # Attribute names plugin code may spell with double underscores; every other dunder (and the frame/closure
    # attributes below) is refused, which shuts the classic `().__class__.__base__.__subclasses__()` and
    # `f.__globals__` / frame-walking routes before the lockdown layers are even needed.
    SAFE_DUNDERS = frozenset((
        '__init__', '__new__', '__post_init__', '__name__', '__qualname__', '__doc__', '__module__', '__class__',
        '__str__', '__repr__', '__format__', '__hash__', '__eq__', '__ne__', '__lt__', '__le__', '__gt__', '__ge__',
        '__bool__', '__len__', '__iter__', '__next__', '__reversed__', '__contains__', '__getitem__', '__setitem__',
        '__delitem__', '__missing__', '__enter__', '__exit__', '__call__', '__add__', '__radd__', '__iadd__', '__sub__',
        '__rsub__', '__isub__', '__mul__', '__rmul__', '__imul__', '__truediv__', '__rtruediv__', '__floordiv__',
        '__rfloordiv__', '__mod__', '__rmod__', '__pow__', '__rpow__', '__neg__', '__pos__', '__abs__', '__invert__',
        '__and__', '__or__', '__xor__', '__rand__', '__ror__', '__rxor__', '__lshift__', '__rshift__', '__int__',
        '__float__', '__index__', '__round__', '__trunc__', '__floor__', '__ceil__', '__matmul__', '__slots__',
        '__match_args__', '__all__', '__version__', '__file__', '__members__', '__args__', '__origin__',
    ))
    # object.__setattr__(anything, '__x__', v) would be an unchecked setattr; super().__setattr__ only reaches self.
    SETTERS = frozenset(('__setattr__', '__delattr__'))
    BANNED_ATTRS = frozenset((
        'f_back', 'f_builtins', 'f_code', 'f_globals', 'f_locals', 'f_trace', 'f_trace_lines', 'f_trace_opcodes',
        'gi_frame', 'gi_code', 'gi_yieldfrom', 'cr_frame', 'cr_code', 'cr_await', 'cr_origin', 'ag_frame', 'ag_code',
        'ag_await', 'tb_frame', 'tb_next', 'cell_contents', 'func_globals', 'func_code', 'func_closure',
    ))
    BANNED_NAMES = frozenset(('__builtins__', '__import__', '__loader__', '__spec__'))
    # Code compiled after the lockdown by the standard library itself (typing's forward references, dataclasses'
    # generated methods, namedtuple) runs with the real builtins, so there these names are refused as well.
    REAL_BUILTIN_NAMES = frozenset((
        'getattr', 'setattr', 'delattr', 'hasattr', 'vars', 'eval', 'exec', 'compile', 'open', 'globals', 'locals',
        'breakpoint', 'input', 'help', '__build_class__',
    ))
    # Audit events allowed once the plugin runs: code execution and harmless introspection. Everything else
    # (open, import, os.*, subprocess.*, socket.*, ctypes.*, marshal.*, code.__new__, sys.settrace, gc.*, ...) is refused.
    ALLOWED_EVENTS = frozenset((
        'exec', 'object.__getattr__', 'object.__delattr__', 'sys._getframe', 'builtins.id', 'time.sleep',
        'sys.unraisablehook', 'sys.excepthook',
    ))
    # posix functions that stay real: no path, no file descriptor, no process or signal effects.
    KEEP_POSIX = frozenset((
        'fspath', 'urandom', 'getrandom', 'getpid', 'getppid', 'uname', 'strerror', 'cpu_count', 'times',
        'WCOREDUMP', 'WEXITSTATUS', 'WIFCONTINUED', 'WIFEXITED', 'WIFSIGNALED', 'WIFSTOPPED', 'WSTOPSIG', 'WTERMSIG',
        'waitstatus_to_exitcode', 'major', 'minor', 'makedev', 'getuid', 'geteuid', 'getgid', 'getegid', 'getgroups',
        'getpgrp', 'getloadavg', 'sched_yield', 'sysconf', 'confstr', 'register_at_fork', 'getcwd', 'getcwdb',
        'fsencode', 'fsdecode', 'getenv', 'getenvb', 'get_exec_path',
    ))
    STUB_THREAD = frozenset(('start_new_thread', 'start_new', 'interrupt_main', 'stack_size'))
    STUB_SIGNAL = frozenset((
        'signal', 'set_wakeup_fd', 'alarm', 'setitimer', 'pthread_kill', 'pthread_sigmask', 'raise_signal',
        'siginterrupt', 'sigwait', 'sigwaitinfo', 'sigtimedwait', 'pidfd_send_signal', 'pause',
    ))
    STUB_IMP = frozenset((
        'create_builtin', 'create_dynamic', 'exec_builtin', 'exec_dynamic', 'init_frozen', 'get_frozen_object',
        'find_frozen', '_override_frozen_modules_for_tests', '_override_multi_interp_extensions_check',
    ))

    write = posix.write
    exit_now = posix._exit
    ModuleType = type(sys)
    FunctionType = type(_harness)
    BuiltinType = type(len)
    real_getattr = builtins.getattr
    real_setattr = builtins.setattr
    real_delattr = builtins.delattr
    real_hasattr = builtins.hasattr
    real_vars = builtins.vars
    real_import = builtins.__import__
    sys_modules = sys.modules
    stdlib_roots = tuple(p for p in sys.path if p.startswith('/'))

    # The protocol keeps a private copy of stdout; fd 1 then points at stderr, which the host only counts, so
    # anything that still writes to fd 1 cannot forge protocol lines.
    proto_fd = posix.dup(1)
    posix.dup2(2, 1)
    stdin = _io.open(0, 'rb', buffering=1 << 16, closefd=False)
    readline = stdin.readline

    # ---------------------------------------------------------------- JSON through the C helpers (no json/re import)
    class _ScanContext:
        pass

    def _no_constant(name):
        raise ValueError('non-finite number ' + name)

    ctx = _ScanContext()
    ctx.strict = True
    ctx.object_hook = None
    ctx.object_pairs_hook = None
    ctx.parse_float = float
    ctx.parse_int = int
    ctx.parse_constant = _no_constant
    scan_once = _json.make_scanner(ctx)
    encode_string = _json.encode_basestring_ascii

    def _not_json(o):
        raise TypeError('Object of type %s is not JSON serializable' % type(o).__name__)

    def dumps(obj):
        # A fresh encoder each time: its circular-reference markers would go stale after an error.
        enc = _json.make_encoder({}, _not_json, encode_string, None, ':', ',', False, False, False)
        return ''.join(enc(obj, 0))

    def loads(text):
        try:
            value, end = scan_once(text, 0)
        except StopIteration:
            raise ValueError('not JSON') from None
        if end != len(text):
            raise ValueError('trailing data')
        return value

    def write_all(data):
        view = memoryview(data)
        while view:
            n = write(proto_fd, view)
            view = view[n:]

    def send_line(text):
        write_all((text + '\n').encode('ascii'))   # ensure_ascii output, so this never fails

    def die(error):
        # Protocol trouble: report once (best effort) and leave without running anything else.
        try:
            send_line(dumps({'t': 'done', 'status': 'failed', 'result': None, 'error': error, 'traceback': None}))
        except BaseException:
            pass
        exit_now(3)

    # ---------------------------------------------------------------- the job
    first = readline(MAX_START + 1)
    if not first.endswith(b'\n'):
        die('PROTOCOL_ERROR: job message missing or too large')
    try:
        job = loads(first[:-1].decode('utf-8'))
        files = {path: binascii.a2b_base64(data) for path, data in job['files'].items()}
        entry = job['entry']
        context = job.get('context')
        config_text = dumps(job.get('config') or {})
        request = job.get('request')
        limits = job.get('limits') or {}
    except Exception as e:
        die('PROTOCOL_ERROR: bad job message (%s)' % type(e).__name__)
    del first, job
    if entry not in files:
        die('SANDBOX_ERROR: entry file %r is not in the package' % entry)

    # ---------------------------------------------------------------- violations
    class SandboxViolation(PermissionError):
        pass

    SandboxViolation.__module__ = 'builtins'
    violations = []

    def violation(what):
        # Recorded as well as raised: catching the exception does not turn a refused escape into a completed run.
        message = what + ' is not allowed in plugin scripts'
        if not violations:
            violations.append(message)
        return SandboxViolation(message)

    def short(value):
        if type(value) in (str, bytes, int):
            text = repr(value)
            return text if len(text) <= 200 else text[:200] + '...'
        return '<%s>' % type(value).__name__

    def describe_event(event, args):
        if event == 'open' and args:
            return violation('open(%s)' % short(args[0]))
        if event == 'import' and args:
            return violation('import of %s' % short(args[0]))
        if event in ('os.listdir', 'os.scandir') and args:
            return violation('%s(%s)' % (event, short(args[0])))
        if event == 'object.__setattr__':
            return violation('setting __code__')
        return violation(event)

    # ---------------------------------------------------------------- static check of the plugin's sources
    AST = _ast.AST
    Attribute = _ast.Attribute
    Name = _ast.Name
    MatchClass = _ast.MatchClass
    Import = _ast.Import
    ImportFrom = _ast.ImportFrom

    def unsafe_attr(name):
        if name[:2] == '__' and name[-2:] == '__':
            return name not in SAFE_DUNDERS
        return name in BANNED_ATTRS

    Call = _ast.Call

    def setter_ok(node, mode):
        # super().__setattr__ (no arguments: only the instance itself) and, in dataclasses' generated code,
        # the `__dataclass_builtins_object__.__setattr__(self, ...)` it writes for frozen classes.
        value = node.value
        if type(value) is Call and type(value.func) is Name and value.func.id == 'super':
            return mode != 'plugin' or (not value.args and not value.keywords)
        return mode == 'dataclass' and type(value) is Name and value.id == '__dataclass_builtins_object__'

    def scan_tree(tree, path, imports, mode='plugin'):
        """The first problem in the source (refused attribute or name), or None; collects imports on the way.

        mode: 'plugin' for the package's files; 'strict' for anything else compiled after the lockdown, and
        'dataclass' for code generated by dataclasses (strict, plus the setter form it needs)."""
        stack = [tree]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is Attribute:
                attr = node.attr
                if unsafe_attr(attr) and not (attr in SETTERS and setter_ok(node, mode)):
                    return "attribute '%s' (%s, line %s)" % (attr, path, real_getattr(node, 'lineno', '?'))
            elif kind is Name:
                if node.id in BANNED_NAMES or (mode != 'plugin' and node.id in REAL_BUILTIN_NAMES):
                    return "the name '%s' (%s, line %s)" % (node.id, path, real_getattr(node, 'lineno', '?'))
            elif kind is MatchClass:
                for attr in node.kwd_attrs:
                    if unsafe_attr(attr):
                        return "attribute '%s' (%s, line %s)" % (attr, path, node.lineno)
            elif kind is Import or kind is ImportFrom:
                if imports is None:
                    return "an import statement (%s)" % path
                if kind is Import:
                    for alias in node.names:
                        imports.append((alias.name, (), 0))
                else:
                    names = tuple(alias.name for alias in node.names)
                    for name in names:
                        if unsafe_attr(name):
                            return "importing '%s' (%s, line %s)" % (name, path, node.lineno)
                    imports.append((node.module or '', names, node.level))
            for field in kind._fields:
                value = real_getattr(node, field, None)
                if type(value) is list:
                    for item in value:
                        if isinstance(item, AST):
                            stack.append(item)
                elif isinstance(value, AST):
                    stack.append(value)
        return None

    # Plugin modules: "a/b.py" -> "a.b", "a/__init__.py" -> "a". As for a script run by python, the entry's
    # directory is an import root; the package root is one too (after it), so "lib/x.py" imports as "lib.x".
    entry_dir = entry.rpartition('/')[0]
    pkg_index = {}
    for root in ((entry_dir + '/', '') if entry_dir else ('',)):
        for path in sorted(files):
            if not path.endswith('.py') or not path.startswith(root):
                continue
            parts = path[len(root):-3].split('/')
            is_pkg = parts[-1] == '__init__'
            if is_pkg:
                parts = parts[:-1]
            if parts and all(p.isidentifier() for p in parts):
                pkg_index.setdefault('.'.join(parts), (path, is_pkg))
    for name in list(pkg_index):
        # Directories without __init__.py still work as (namespace) packages.
        bits = name.split('.')
        for i in range(1, len(bits)):
            pkg_index.setdefault('.'.join(bits[:i]), (None, True))
    pkg_tops = frozenset(name.partition('.')[0] for name in pkg_index)

    trees = {}        # path -> AST, or the exception/violation that stops the file from loading
    imports = []
    for path, source in files.items():
        if not path.endswith('.py'):
            continue
        try:
            tree = compile(source, path, 'exec', _ast.PyCF_ONLY_AST, dont_inherit=True)
        except SyntaxError as e:
            trees[path] = e
            continue
        except Exception as e:   # e.g. null bytes, bad encoding cookie
            trees[path] = SyntaxError('%s: %s' % (type(e).__name__, e))
            continue
        problem = scan_tree(tree, path, imports)
        trees[path] = ('violation', problem) if problem else tree

    # ---------------------------------------------------------------- preload, while the file system is still usable
    def allowed_module_name(name):
        parts = name.split('.')
        return parts[0] in ALLOWED and not any(p.startswith('_') for p in parts)

    def preload(name, seen):
        if name in seen:
            return
        seen.add(name)
        try:
            real_import(name)
        except BaseException:
            return      # the plugin's own import will fail with a clear message
        for dep in LAZY_DEPS.get(name.partition('.')[0], ()):
            preload(dep, seen)

    seen = set()
    preload('warnings', seen)
    for name, fromlist, level in imports:
        if level or not name:
            continue
        if name == '__future__':
            preload(name, seen)
            continue
        if name.partition('.')[0] in pkg_tops or not allowed_module_name(name):
            continue
        preload(name, seen)
        mod = sys_modules.get(name)
        if mod is not None and real_hasattr(mod, '__path__'):
            for item in fromlist:
                if item != '*' and not real_hasattr(mod, item) and allowed_module_name(name + '.' + item):
                    preload(name + '.' + item, seen)
    # Allowed modules can also arrive as dependencies of others (typing brings functools): give them their lazy
    # dependencies too, until nothing new loads.
    while True:
        before = len(sys_modules)
        for top in [m for m in ALLOWED if m in sys_modules]:
            preload(top, seen)
        if len(sys_modules) == before:
            break
    del seen, imports

    # ---------------------------------------------------------------- logs (print output and base.log lines, in order)
    log_lines = []
    log_size = [0]
    partial = []
    partial_size = [0]
    last_flush = [monotonic()]

    def flush_logs():
        last_flush[0] = monotonic()
        if not log_lines:
            return
        batch = []
        size = 0
        for line in log_lines:
            if batch and size + len(line) > (MAX_MSG // 8):
                send_line(dumps({'t': 'log', 'l': batch}))
                batch = []
                size = 0
            batch.append(line)
            size += len(line) + 8
        send_line(dumps({'t': 'log', 'l': batch}))
        log_lines.clear()
        log_size[0] = 0

    def add_line(line):
        if len(line) > MAX_LOG_LINE:
            line = line[:MAX_LOG_LINE] + ' ... [line cut at 64 KiB]'
        log_lines.append(line)
        log_size[0] += len(line)
        if log_size[0] >= FLUSH_BYTES or monotonic() - last_flush[0] >= FLUSH_SECONDS:
            flush_logs()

    def end_partial():
        if partial:
            line = ''.join(partial)
            partial.clear()
            partial_size[0] = 0
            add_line(line)

    def out_write(text):
        if type(text) is not str:
            if not isinstance(text, str):
                raise TypeError('write() argument must be str, not %s' % type(text).__name__)
            text = str.__str__(text)
        if not text:
            return 0
        pieces = text.split('\n')
        if len(pieces) > 1:
            if partial_size[0] <= MAX_LOG_LINE:
                partial.append(pieces[0][:MAX_LOG_LINE + 1])
            end_partial()
            for piece in pieces[1:-1]:
                add_line(piece)
            if pieces[-1]:
                partial.append(pieces[-1][:MAX_LOG_LINE + 1])
                partial_size[0] = len(pieces[-1])
        elif partial_size[0] <= MAX_LOG_LINE:
            # Text without a newline waits for one; past the line cap the rest of the line is dropped.
            partial.append(text)
            partial_size[0] += len(text)
        return len(text)

    def log_message(message):
        end_partial()
        add_line(message)

    class _Output:
        """sys.stdout/sys.stderr of the plugin: print() lands in the run's logs, never on the protocol channel."""
        __slots__ = ()
        encoding = 'utf-8'
        errors = 'strict'

        def write(self, text):
            return out_write(text)

        def flush(self):
            pass

        def isatty(self):
            return False

        def writable(self):
            return True

        def readable(self):
            return False

        def fileno(self):
            raise OSError('the plugin output has no file descriptor')

    output = _Output()
    sys.stdout = sys.stderr = sys.__stdout__ = sys.__stderr__ = output
    sys.stdin = sys.__stdin__ = None

    # ---------------------------------------------------------------- runtime objects
    class PluginError(Exception):
        """A host error from a base method; str(e) starts with the code."""

        def __init__(self, message='', code='ERROR'):
            self.code = str(code)
            self.message = str(message)
            super().__init__('%s: %s' % (self.code, self.message) if self.message else self.code)

    class PermissionDenied(PluginError):
        """The plugin's manifest does not declare the permission, or the user lacks the role."""

        def __init__(self, message=''):
            super().__init__(message, 'PERMISSION_DENIED')

    PluginError.__module__ = PermissionDenied.__module__ = 'builtins'

    call_seq = [0]

    def call(method, args):
        flush_logs()
        call_seq[0] += 1
        seq = call_seq[0]
        try:
            data = dumps({'t': 'call', 'id': seq, 'm': method, 'a': args})
        except (TypeError, ValueError) as e:
            raise TypeError('base.%s(): arguments must be JSON values (%s)' % (method, e)) from None
        if len(data) >= MAX_MSG:
            raise ValueError('base.%s(): the request is larger than 1 MiB' % method)
        send_line(data)
        line = readline(MAX_MSG + 2)
        if not line.endswith(b'\n'):
            die('PROTOCOL_ERROR: the reply to base.%s() is missing or larger than 1 MiB' % method)
        try:
            reply = loads(line[:-1].decode('utf-8'))
        except Exception:
            die('PROTOCOL_ERROR: malformed reply to base.%s()' % method)
        if type(reply) is not dict or reply.get('id') != seq:
            die('PROTOCOL_ERROR: unexpected reply to base.%s()' % method)
        if reply.get('ok') is True:
            return reply.get('v')
        code = reply.get('code') or 'ERROR'
        message = reply.get('message') or ''
        if code == 'PERMISSION_DENIED':
            raise PermissionDenied(message)
        raise PluginError(message, code)

    class Base:
        """The plugin's restricted view of the base; every data method is one round trip to the host."""
        __slots__ = ()

        def list_tables(self):
            return call('list_tables', [])

        def get_fields(self, table_id):
            return call('get_fields', [table_id])

        def list_records(self, table_id, page=1, per_page=20):
            return call('list_records', [table_id, page, per_page])

        def get_record(self, record_id):
            return call('get_record', [record_id])

        def create_record(self, table_id, values):
            return call('create_record', [table_id, values])

        def update_record(self, record_id, values):
            return call('update_record', [record_id, values])

        def delete_record(self, record_id):
            return call('delete_record', [record_id])

        def get_config(self):
            return loads(config_text)

        def log(self, message):
            log_message(message if type(message) is str else str(message))

        def __repr__(self):
            return '<base>'

    entry_globals = {}

    def set_result(value):
        entry_globals['result'] = value

    # ---------------------------------------------------------------- imports and module views for plugin code
    IO_OPENERS = (_io.open, _io.open_code, _io.FileIO)
    HIDDEN = {'io': frozenset(('open', 'open_code', 'FileIO'))}
    proxies = {}

    def proxy(mod):
        """A plugin's view of an allowed module: public names only, and no modules outside the allow-list."""
        name = mod.__name__
        view = proxies.get(name)
        if view is None:
            view = ModuleType(name, real_getattr(mod, '__doc__', None))
            proxies[name] = view
            hidden = HIDDEN.get(name, ())
            target = real_vars(view)
            for key, value in list(real_vars(mod).items()):
                if type(key) is not str or key[:1] == '_' or key in hidden:
                    continue
                if type(value) is ModuleType:
                    sub = real_getattr(value, '__name__', '')
                    if type(sub) is not str or not allowed_module_name(sub):
                        continue
                    value = proxy(value)
                elif any(value is opener for opener in IO_OPENERS):
                    continue
                target[key] = value
            for key, wrap in OVERRIDES.get(name, {}).items():
                if key in target:
                    target[key] = wrap(target[key])
            names = real_vars(mod).get('__all__')
            if names is not None:
                target['__all__'] = [k for k in names if type(k) is str and k in target]
        return view

    pkg_modules = {}
    rbuiltins = {}

    def load_pkg(name):
        module = pkg_modules.get(name)
        if module is not None:
            return module
        parent, _, last = name.rpartition('.')
        if parent:
            load_pkg(parent)
        path, is_pkg = pkg_index[name]
        module = ModuleType(name)
        namespace = real_vars(module)
        namespace['__builtins__'] = rbuiltins
        namespace['__package__'] = name if is_pkg else parent
        if path is not None:
            namespace['__file__'] = path
        pkg_modules[name] = module
        if name not in sys_modules:
            sys_modules[name] = module          # lets typing resolve the plugin's own annotations
        if parent:
            real_setattr(pkg_modules[parent], last, module)
        if path is not None:
            try:
                run_file(path, namespace)
            except BaseException:
                del pkg_modules[name]
                raise
        return module

    def run_file(path, namespace):
        tree = trees.get(path)
        if type(tree) is tuple:
            raise violation(tree[1])
        if isinstance(tree, BaseException):
            raise tree
        code = compile(tree, path, 'exec', dont_inherit=True)
        exec(code, namespace)

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if type(name) is not str:
            raise TypeError('module name must be str')
        if type(fromlist) is list and not fromlist and not level and name in sys_modules:
            # C code (datetime.strptime importing _strptime, ...) imports through PyImport_Import, which calls
            # __import__ with an empty *list* (import statements pass None or a tuple) and then takes the module
            # from sys.modules itself; answering None keeps that working without handing the real module to
            # anyone who imitates the call.
            return None
        if level:
            package = globals.get('__package__') if type(globals) is dict else None
            if not package:
                raise ImportError('attempted relative import with no known parent package')
            bits = package.rsplit('.', level - 1)
            if len(bits) < level:
                raise ImportError('attempted relative import beyond top-level package')
            name = bits[0] + '.' + name if name else bits[0]
        top = name.partition('.')[0]
        if top in pkg_tops:
            if name not in pkg_index:
                raise ModuleNotFoundError("No module named '%s'" % name, name=name)
            module = load_pkg(name)
            if fromlist:
                for item in fromlist:
                    if type(item) is str and item != '*' and name + '.' + item in pkg_index:
                        load_pkg(name + '.' + item)
                return module
            return pkg_modules[top]
        if name == '__future__' and name in sys_modules:
            return sys_modules[name]
        if not allowed_module_name(name):
            raise ModuleNotFoundError(
                "import of '%s' is not allowed in plugin scripts (allowed: %s)" % (name, ', '.join(sorted(ALLOWED))),
                name=name)
        real = sys_modules.get(name)
        if real is None:
            raise ModuleNotFoundError(
                "module '%s' is not available: plugin scripts can use allowed modules only through import "
                "statements" % name, name=name)
        if fromlist:
            return proxy(real)
        return proxy(sys_modules[top])

    # Builtins of plugin code: no open/eval/exec/compile/input, and the attribute helpers refuse the same names as
    # the source check, so getattr(obj, '__glo' + 'bals__') is no way around it.
    def refuse_call(what):
        def refused(*args, **kwargs):
            raise violation(what)
        refused.__name__ = what.partition('(')[0]
        return refused

    def getattr(obj, name, *default):
        if type(name) is str and unsafe_attr(name):
            raise violation("access to attribute '%s'" % name)
        return real_getattr(obj, name, *default)

    def hasattr(obj, name):
        if type(name) is str and unsafe_attr(name):
            raise violation("access to attribute '%s'" % name)
        return real_hasattr(obj, name)

    def setattr(obj, name, value):
        if type(name) is str and (unsafe_attr(name) or name[:2] == '__'):
            raise violation("setting attribute '%s'" % name)
        return real_setattr(obj, name, value)

    def delattr(obj, name):
        if type(name) is str and (unsafe_attr(name) or name[:2] == '__'):
            raise violation("deleting attribute '%s'" % name)
        return real_delattr(obj, name)

    def vars(*args):
        if not args:
            return sys._getframe(1).f_locals
        obj = args[0]
        if isinstance(obj, (type, ModuleType)):
            raise violation('vars() of a class or module')
        namespace = real_vars(obj)
        for key in namespace:
            if type(key) is str and unsafe_attr(key):
                raise violation("access to attribute '%s'" % key)
        return namespace

    rbuiltins.update(real_vars(builtins))
    for key in ('open', 'eval', 'exec', 'compile', 'input', 'breakpoint', 'help', 'exit', 'quit', 'copyright',
                'credits', 'license', '__loader__', '__spec__', '__import__'):
        rbuiltins.pop(key, None)
    rbuiltins.update({
        '__import__': guarded_import, 'getattr': getattr, 'hasattr': hasattr, 'setattr': setattr,
        'delattr': delattr, 'vars': vars,
        'open': refuse_call('open()'), 'eval': refuse_call('eval()'), 'exec': refuse_call('exec()'),
        'compile': refuse_call('compile()'), 'input': refuse_call('input()'), 'breakpoint': refuse_call('breakpoint()'),
        'base': Base(), 'context': context, 'config': loads(config_text), 'request': request,
        'set_result': set_result, 'PermissionDenied': PermissionDenied, 'PluginError': PluginError,
    })

    # ---------------------------------------------------------------- warnings and unraisable errors go to the logs
    def display_path(filename):
        if type(filename) is not str:
            return None
        if filename in files:
            return filename
        for root in stdlib_roots:
            if filename.startswith(root + '/'):
                return '<stdlib>/' + filename[len(root) + 1:]
        return None

    def show_warning(message, category, filename, lineno, file=None, line=None):
        where = display_path(filename) or '<sandbox>'
        log_message('%s:%s: %s: %s' % (where, lineno, real_getattr(category, '__name__', 'Warning'), message))

    warnings = sys_modules.get('warnings')
    if warnings is not None:
        warnings.showwarning = show_warning

    def unraisable(info):
        log_message('Exception ignored: %s: %s' % (type(info.exc_value).__name__, info.exc_value))

    sys.unraisablehook = unraisable
    sys.breakpointhook = refuse_call('breakpoint()')

    # ---------------------------------------------------------------- resource limits
    memory = int(limits.get('memory') or 256 << 20)
    cpu = int(limits.get('cpu') or 32)

    def limit(which, value):
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            soft, hard = resource.getrlimit(which)
            if hard != resource.RLIM_INFINITY and hard < value:
                resource.setrlimit(which, (hard, hard))

    # A wall-clock backstop of our own: the host kills the run at its timeout, but should the host itself die
    # without bubblewrap around us, a sleeping script still ends (SIGALRM's default action terminates).
    wall = int(limits.get('wall') or 0)
    if wall > 0:
        sys_modules['_signal'].alarm(wall)
    limit(resource.RLIMIT_AS, memory)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    except (ValueError, OSError):
        pass
    limit(resource.RLIMIT_NPROC, 0)        # fork fails (for a non-root uid; the runner drops root)
    limit(resource.RLIMIT_NOFILE, 16)
    limit(resource.RLIMIT_FSIZE, 0)
    limit(resource.RLIMIT_CORE, 0)
    limit(resource.RLIMIT_MEMLOCK, 0)
    limit(resource.RLIMIT_MSGQUEUE, 0)

    # ---------------------------------------------------------------- lockdown: replace the un-audited dangerous functions
    def make_stub(qualname):
        def refused(*args, **kwargs):
            raise violation(qualname + '()')
        refused.__name__ = qualname.rpartition('.')[2]
        return refused

    replaced = {}

    def stub_module(module, names=None, keep=frozenset()):
        if module is None:
            return
        namespace = real_vars(module)
        for key, value in list(namespace.items()):
            if key[:2] == '__' or key in keep or (names is not None and key not in names):
                continue
            if type(value) in (BuiltinType, FunctionType):
                stub = replaced.get(id(value))
                if stub is None:
                    stub = make_stub(module.__name__ + '.' + key)
                    replaced[id(value)] = stub
                namespace[key] = stub

    stub_module(posix, keep=KEEP_POSIX)
    os_module = sys_modules.get('os')
    stub_module(os_module, keep=KEEP_POSIX)
    if os_module is not None:
        for key in ('supports_dir_fd', 'supports_fd', 'supports_effective_ids', 'supports_follow_symlinks'):
            funcs = real_vars(os_module).get(key)
            if type(funcs) is set:
                funcs.clear()       # these sets held the original functions
    stub_module(sys_modules.get('_imp'), names=STUB_IMP)
    stub_module(sys_modules.get('_thread'), names=STUB_THREAD)
    stub_module(sys_modules.get('_signal'), names=STUB_SIGNAL)
    # Other modules that copied one of those functions under their own name get the stub too.
    for module in list(sys_modules.values()):
        if type(module) is not ModuleType:
            continue
        namespace = real_vars(module)
        for key, value in list(namespace.items()):
            if type(value) is BuiltinType:
                stub = replaced.get(id(value))
                if stub is not None:
                    namespace[key] = stub
    replaced.clear()
    sys.path = []

    # ---------------------------------------------------------------- standard-library helpers that getattr by name
    # These would read any attribute for plugin code (string.Formatter().get_field('0.__globals__', ...)), so they
    # refuse the same names as the source check. The originals stay only in closures, which plugin code cannot open.
    string_module = sys_modules.get('string')
    if string_module is not None:
        original_get_field = string_module.Formatter.get_field

        def get_field(self, field_name, args, kwargs):
            if type(field_name) is str:
                first, rest = _string.formatter_field_name_split(field_name)
                for is_attr, key in rest:
                    if is_attr and type(key) is str and unsafe_attr(key):
                        raise violation("access to attribute '%s'" % key)
            return original_get_field(self, field_name, args, kwargs)

        string_module.Formatter.get_field = get_field
    functools_module = sys_modules.get('functools')
    if functools_module is not None:
        original_update_wrapper = functools_module.update_wrapper
        wrapper_names = frozenset(functools_module.WRAPPER_ASSIGNMENTS) | frozenset(functools_module.WRAPPER_UPDATES)

        def update_wrapper(wrapper, wrapped, assigned=functools_module.WRAPPER_ASSIGNMENTS,
                           updated=functools_module.WRAPPER_UPDATES):
            for name in tuple(assigned) + tuple(updated):
                if type(name) is not str or (unsafe_attr(name) and name not in wrapper_names):
                    raise violation("access to attribute '%s'" % (name,))
            return original_update_wrapper(wrapper, wrapped, assigned, updated)

        update_wrapper.__doc__ = original_update_wrapper.__doc__
        real_vars(functools_module)['update_wrapper'] = update_wrapper     # wraps() looks it up here

    def checked_attrgetter(real):
        def attrgetter(attr, *attrs):
            for name in (attr,) + attrs:
                if type(name) is str and any(unsafe_attr(part) for part in name.split('.')):
                    raise violation("access to attribute '%s'" % name)
            getter = real(attr, *attrs)
            return lambda obj: getter(obj)
        return attrgetter

    def checked_methodcaller(real):
        def methodcaller(name, *args, **kwargs):
            if type(name) is str and unsafe_attr(name):
                raise violation("access to attribute '%s'" % name)
            caller = real(name, *args, **kwargs)
            return lambda obj: caller(obj)
        return methodcaller

    OVERRIDES = {'operator': {'attrgetter': checked_attrgetter, 'methodcaller': checked_methodcaller}}

    # typing evaluates forward references, and dataclasses executes its generated methods, in the globals of the
    # module a class names as its __module__ (which plugin code chooses with type(name, bases, {'__module__': ...})).
    # Evaluated in a standard module's globals, a string annotation could name `sys` or `os`; give them an empty
    # namespace instead (the builtins there are covered by the strict source check of what they compile).
    dataclasses_module = sys_modules.get('dataclasses')
    create_fn_code = dataclasses_module._create_fn.__code__ if dataclasses_module is not None else None
    module_dicts = frozenset(id(real_vars(m)) for m in list(sys_modules.values()) if type(m) is ModuleType)

    def own_namespace(ns):
        return {} if ns is not None and id(ns) in module_dicts else ns

    typing_module = sys_modules.get('typing')
    if typing_module is not None:
        original_evaluate = typing_module.ForwardRef._evaluate

        def _evaluate(self, globalns, localns, recursive_guard):
            forward_module = self.__forward_module__
            if forward_module is not None:
                module = sys_modules.get(forward_module)
                if module is None or id(real_vars(module)) in module_dicts:
                    self.__forward_module__ = None
            return original_evaluate(self, own_namespace(globalns), own_namespace(localns), recursive_guard)

        typing_module.ForwardRef._evaluate = _evaluate
    if dataclasses_module is not None:
        original_create_fn = dataclasses_module._create_fn

        def _create_fn(name, args, body, *, globals=None, locals=None, return_type=dataclasses_module.MISSING):
            return original_create_fn(name, args, body, globals=own_namespace(globals), locals=locals,
                                      return_type=return_type)

        real_vars(dataclasses_module)['_create_fn'] = _create_fn

    # Everything compiled after the lockdown passes the same source check: the plugin's files as plugin code,
    # anything else (typing's forward references, dataclasses/namedtuple generated code) strictly.
    plugin_paths = frozenset(files)
    parsing = [False]
    approved = {id(tree): tree for tree in trees.values() if isinstance(tree, AST)}

    def check_compile(source, filename):
        if parsing[0]:
            return None     # the parse below
        if isinstance(source, AST):
            # The event carries no file name for an AST; the harness only compiles the trees it checked at load.
            tree = source
            if approved.get(id(source)) is source:
                return None
        else:
            parsing[0] = True
            try:
                try:
                    tree = compile(source, '<check>', 'exec', _ast.PyCF_ONLY_AST, dont_inherit=True)
                except SyntaxError:
                    tree = compile(source, '<check>', 'exec', _ast.PyCF_ONLY_AST | 0x2000, dont_inherit=True)
            except BaseException:
                return None     # the real compile fails the same way
            finally:
                parsing[0] = False
        if type(filename) is str and filename in plugin_paths:
            mode = 'plugin'
        else:
            mode = 'strict'
            frame = sys._getframe(1)
            for _ in range(4):
                if frame is None:
                    break
                if frame.f_code is create_fn_code:
                    mode = 'dataclass'
                    break
                frame = frame.f_back
        problem = scan_tree(tree, filename if type(filename) is str else '<code>', None, mode)
        return violation(problem) if problem else None

    # ---------------------------------------------------------------- the audit hook
    # Built from source with its decisions as constants and private globals; the only reference to it is the
    # interpreter's hook list, so neither its code nor its globals can be reached and changed from plugin code.
    hook_globals = {'__builtins__': {}, '_rec': describe_event, '_chk': check_compile, '_type': type, '_str': str}
    exec(compile(
        'def hook(event, args):\n'
        '    if event in {%s}:\n'         # a set literal after `in` compiles to a frozenset constant
        '        return\n'
        '    if event == "object.__setattr__" and _type(args[1]) is _str and args[1] != "__code__":\n'
        '        return\n'
        '    if event == "compile":\n'
        '        refused = _chk(args[0], args[1])\n'
        '        if refused is None:\n'
        '            return\n'
        '        raise refused\n'
        '    raise _rec(event, args)\n' % ', '.join(repr(e) for e in sorted(ALLOWED_EVENTS)),
        '<sandbox-hook>', 'exec'), hook_globals)
    sys.addaudithook(hook_globals['hook'])
    del hook_globals

    # ---------------------------------------------------------------- run the entry
    entry_module = ModuleType('__main__')
    entry_globals = real_vars(entry_module)   # set_result writes here
    entry_globals.update({'__builtins__': rbuiltins, '__file__': entry, 'result': None})
    entry_package = entry_dir.replace('/', '.')
    entry_globals['__package__'] = entry_package if entry_package and entry_package in pkg_index else None
    sys_modules['__main__'] = entry_module

    status = 'completed'
    error = None
    trace = None
    failure = None
    try:
        run_file(entry, entry_globals)
    except SystemExit as e:
        if e.code not in (None, 0):
            failure = e
    except BaseException as e:
        failure = e

    def exception_line(e):
        name = type(e).__name__
        try:
            text = str(e)
        except BaseException:
            text = '<unprintable %s>' % name
        if isinstance(e, MemoryError) and not text:
            text = 'the script exceeded its memory limit (%d MiB)' % (memory >> 20)
        return '%s: %s' % (name, text) if text else name

    def source_line(path, lineno):
        try:
            return files[path].decode('utf-8', 'replace').splitlines()[lineno - 1].strip()
        except (IndexError, KeyError, TypeError, AttributeError):
            return None

    def format_exception(e, seen):
        lines = []
        cause = e.__cause__
        context_exc = e.__context__
        if cause is not None and id(cause) not in seen:
            seen.add(id(cause))
            lines += format_exception(cause, seen)
            lines += ['', 'The above exception was the direct cause of the following exception:', '']
        elif context_exc is not None and not e.__suppress_context__ and id(context_exc) not in seen:
            seen.add(id(context_exc))
            lines += format_exception(context_exc, seen)
            lines += ['', 'During handling of the above exception, another exception occurred:', '']
        frames = []
        tb = e.__traceback__
        while tb is not None:
            code = tb.tb_frame.f_code
            shown = display_path(code.co_filename)
            if shown is not None:
                frames.append((shown, tb.tb_lineno, code.co_name))
            tb = tb.tb_next
        if frames:
            lines.append('Traceback (most recent call last):')
            last = None
            repeats = 0
            for frame in frames:
                if frame == last:
                    repeats += 1
                    if repeats >= 3:
                        continue
                else:
                    if repeats >= 3:
                        lines.append('  [Previous line repeated %d more times]' % (repeats - 2))
                    repeats = 0
                last = frame
                lines.append('  File "%s", line %s, in %s' % frame)
                text = source_line(frame[0], frame[1]) if frame[0] in files else None
                if text:
                    lines.append('    ' + text)
            if repeats >= 3:
                lines.append('  [Previous line repeated %d more times]' % (repeats - 2))
        if isinstance(e, SyntaxError) and e.filename:
            lines.append('  File "%s", line %s' % (display_path(e.filename) or e.filename, e.lineno))
            if e.text:
                lines.append('    ' + e.text.rstrip('\n').strip())
        lines.append(exception_line(e))
        return lines

    if failure is not None:
        status = 'failed'
        try:
            error = exception_line(failure)
            trace = '\n'.join(format_exception(failure, {id(failure)}))
            if len(trace) > (64 << 10):
                trace = trace[:32 << 10] + '\n...\n' + trace[-(32 << 10):]
        except MemoryError:
            for module in [entry_module] + list(pkg_modules.values()):
                real_vars(module).clear()
            failure = None
            error = 'MemoryError: the script exceeded its memory limit (%d MiB)' % (memory >> 20)
            trace = None
    if violations:
        status = 'failed'
        error = 'SandboxViolation: ' + violations[0]

    result = entry_globals.get('result')
    try:
        end_partial()
        flush_logs()
        message = dumps({'t': 'done', 'status': status, 'result': result, 'error': error, 'traceback': trace})
        if len(message) >= MAX_MSG:
            message = dumps({'t': 'done', 'status': 'failed', 'result': None, 'traceback': None,
                             'error': 'the result is larger than 1 MiB'})
    except Exception as e:
        message = dumps({'t': 'done', 'status': 'failed', 'result': None, 'traceback': trace,
                         'error': 'the result is not JSON-serialisable: %s' % exception_line(e)})
    try:
        send_line(message)
    except BaseException:
        exit_now(4)
    exit_now(0)


_harness()
