// Command-line tools: `backup <file>` copies the database online; `plugin validate|pack <dir>` checks and zips a plugin folder; `help` lists commands.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError, readConfig, withDotEnv } from './config.js';

// The database file name, as DB_FILE in src/db/sqlite-store.ts (test/backup.test.ts checks they agree). Not imported:
// that module loads drizzle and its migrator, which would slow this tool's start-up.
const DB_FILE = 'table-service.db';

const USAGE = `Usage: tsx src/cli.ts <command> [arguments]

Commands:
  backup <file>   Write a consistent copy of <DATA_DIR>/${DB_FILE} to <file> (SQLite online backup).
                  Safe while the server is running and writing. An existing <file> is replaced.
  plugin validate <dir>
                  Check a plugin folder with the upload rules (manifest, files, limits); print every problem.
  plugin pack <dir> [out.stplugin.zip]
                  Check the folder, then write it as a package (default <id>-<version>.stplugin.zip here).
                  Files named *.stplugin.zip in the folder are left out.
  help            Show this message.

Environment:
  DATA_DIR        The server's data directory (default ./data).

The signing key (<DATA_DIR>/signing-key.json) is not part of the database: keep a copy of it
next to the backups, or tokens issued before a restore stop being valid.`;

/** An error with a message meant for the operator, and the exit code to use. */
class CliError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
  }
}

interface BackupResult {
  file: string;
  bytes: number;
  pages: number;
  pageSize: number;
  millis: number;
}

/**
 * Copies the database at `source` to `target` with SQLite's online backup API.
 * The pages are copied in one step, inside one read transaction: in WAL mode writers go on meanwhile,
 * and the copy is the database as of one commit. The copy is written to a temporary file beside
 * `target`, checked, and renamed over it, so `target` never holds a partial copy.
 */
async function backupDatabase(source: string, target: string): Promise<BackupResult> {
  const started = Date.now();
  if (!fs.existsSync(source)) throw new CliError(`No database at ${source}: is DATA_DIR set to the server's data directory?`);
  const dest = path.resolve(target);
  if (dest === path.resolve(source)) throw new CliError('The backup file must not be the database itself');
  const dir = path.dirname(dest);
  try {
    if (!fs.statSync(dir).isDirectory()) throw new Error('not a directory');
    fs.accessSync(dir, fs.constants.W_OK);
  } catch {
    throw new CliError(`Cannot write ${dest}: the directory ${dir} does not exist or is not writable`);
  }
  if (fs.existsSync(dest) && fs.statSync(dest).isDirectory()) throw new CliError(`Cannot write ${dest}: it is a directory`);

  let db: Database.Database;
  try {
    db = new Database(source, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new CliError(`Cannot open the database ${source}: ${(error as Error).message}`);
  }
  const tmp = path.join(dir, `.${path.basename(dest)}.${process.pid}.tmp`);
  try {
    db.pragma('busy_timeout = 5000');
    try {
      // After the first step has sized the copy, copy every remaining page in one step (one read transaction):
      // copying in slices would restart from the beginning whenever the server commits in between.
      await db.backup(tmp, { progress: () => 0x7fffffff });
    } catch (error) {
      throw new CliError(`Backup to ${dest} failed: ${(error as Error).message}`);
    }
    const copy = new Database(tmp, { fileMustExist: true });
    let pages: number;
    let pageSize: number;
    try {
      const check = copy.pragma('quick_check', { simple: true });
      if (check !== 'ok') throw new CliError(`The copy failed its integrity check: ${String(check)}`);
      pages = copy.pragma('page_count', { simple: true }) as number;
      pageSize = copy.pragma('page_size', { simple: true }) as number;
    } finally {
      copy.close();
    }
    try {
      fs.renameSync(tmp, dest);
    } catch (error) {
      throw new CliError(`Cannot write ${dest}: ${(error as Error).message}`);
    }
    return { file: dest, bytes: fs.statSync(dest).size, pages, pageSize, millis: Date.now() - started };
  } finally {
    db.close();
    for (const leftover of [tmp, `${tmp}-journal`, `${tmp}-wal`, `${tmp}-shm`]) fs.rmSync(leftover, { force: true });
  }
}

/** A plugin folder as the zip `plugin pack` would write, or the problems that stop it being zipped at all. */
interface FolderPackage {
  zip: Buffer | null;
  problems: Array<{ path: string; message: string }>;
  fileCount: number;
  skipped: string[];
}

/**
 * Zips a plugin folder, so that `validate` and `pack` check exactly what would be uploaded, with readPackage.
 * Symbolic links go in as link entries (readPackage refuses them, as it would in an uploaded zip); the entry
 * and size limits are also checked on the folder, so that an oversized folder is not read into memory first.
 */
async function zipFolder(dir: string, exclude: string | null): Promise<FolderPackage> {
  const { default: JSZip } = await import('jszip');
  const reader = await import('../plugins-runtime/package-reader.js');
  const root = path.resolve(dir);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(root);
  } catch {
    throw new CliError(`No plugin folder at ${root}`);
  }
  if (!stat.isDirectory()) throw new CliError(`${root} is not a folder (plugin validate and pack take the plugin's folder)`);

  const found: Array<{ name: string; full: string; link: boolean }> = [];
  const skipped: string[] = [];
  const problems: FolderPackage['problems'] = [];
  let bytes = 0;
  const walk = (folder: string, prefix: string): boolean => {
    // Sorted, so that one folder always gives the same archive.
    for (const item of fs.readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      const full = path.join(folder, item.name);
      const name = prefix + item.name;
      if (item.isDirectory()) {
        if (!walk(full, `${name}/`)) return false;
        continue;
      }
      if (full === exclude || item.name.endsWith('.stplugin.zip')) {
        skipped.push(name);
        continue;
      }
      if (!item.isFile() && !item.isSymbolicLink()) {
        problems.push({ path: name, message: 'is not a regular file' });
        continue;
      }
      found.push({ name, full, link: item.isSymbolicLink() });
      if (found.length > reader.MAX_ENTRIES) return false;
      if (item.isFile()) bytes += fs.statSync(full).size;
    }
    return true;
  };
  walk(root, '');
  if (found.length > reader.MAX_ENTRIES) return { zip: null, problems: [reader.tooManyEntries(reader.MAX_ENTRIES)], fileCount: found.length, skipped };
  if (bytes > reader.MAX_BYTES) return { zip: null, problems: [...problems, reader.tooLarge(reader.MAX_BYTES)], fileCount: found.length, skipped };

  const zip = new JSZip();
  // manifest.json first: a reader listing the archive sees what it is at once.
  found.sort((a, b) => Number(b.name === 'manifest.json') - Number(a.name === 'manifest.json'));
  // A fixed date: packing an unchanged folder again gives the same bytes.
  const date = new Date(Date.UTC(2020, 0, 1));
  for (const f of found) {
    const content = f.link ? Buffer.from(fs.readlinkSync(f.full)) : fs.readFileSync(f.full);
    // createFolders off: folder entries would count against the entry limit for nothing.
    zip.file(f.name, content, { date, createFolders: false, unixPermissions: f.link ? 0o120777 : 0o100644 });
  }
  const out = await zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE', compressionOptions: { level: 9 }, platform: 'UNIX' });
  return { zip: out, problems, fileCount: found.length, skipped };
}

/** Runs a folder through the upload checks; prints every problem. The package on success, null otherwise. */
async function checkFolder(dir: string, exclude: string | null) {
  const { readPackage, PackageError } = await import('../plugins-runtime/package-reader.js');
  const { version } = await import('./version.js');
  const folder = await zipFolder(dir, exclude);
  let problems = folder.problems;
  let pkg: Awaited<ReturnType<typeof readPackage>> | null = null;
  if (folder.zip) {
    try {
      pkg = await readPackage(folder.zip, { hostVersion: version });
    } catch (error) {
      if (!(error instanceof PackageError)) throw error;
      problems = [...problems, ...error.problems];
    }
  }
  for (const name of folder.skipped) console.log(`skipped ${name} (packages are not packed into packages)`);
  if (problems.length > 0 || !pkg || !folder.zip) {
    console.error(`${path.resolve(dir)}: ${problems.length} problem(s) (host version ${version})`);
    for (const p of problems) console.error(`  ${p.path || '(package)'}: ${p.message}`);
    return null;
  }
  return { ...pkg, zip: folder.zip };
}

async function main(argv: string[]): Promise<number> {
  // `--help` anywhere answers with the usage and does nothing else (never a backup file named "--help").
  if (argv.some((a) => a === '--help' || a === '-h')) {
    console.log(USAGE);
    return 0;
  }
  const [command, ...args] = argv;
  switch (command) {
    case 'backup': {
      if (args.length !== 1 || !args[0]) throw new CliError(`backup takes one argument, the file to write\n\n${USAGE}`, 2);
      const config = readConfig(withDotEnv(process.env));
      if (config.databaseUrl) {
        throw new CliError('DATABASE_URL names PostgreSQL: back it up with pg_dump (this command copies the SQLite file in DATA_DIR)');
      }
      const source = path.join(config.dataDir, DB_FILE);
      const r = await backupDatabase(source, args[0]);
      console.log(`Backed up ${source}`);
      console.log(`Wrote ${r.file}: ${r.bytes} bytes, ${r.pages} pages of ${r.pageSize} bytes, in ${r.millis} ms`);
      return 0;
    }
    case 'plugin': {
      // Loaded here, not at the top: backup should not pay for jszip and ajv.
      const [sub, dir, out, ...rest] = args;
      if (sub === 'validate') {
        if (!dir || out !== undefined) throw new CliError(`plugin validate takes one argument, the plugin folder\n\n${USAGE}`, 2);
        const pkg = await checkFolder(dir, null);
        if (!pkg) return 1;
        const m = pkg.manifest;
        console.log(`OK: ${m.id} ${m.version} (${m.type}), ${pkg.files.size} files, ${pkg.zip.length} bytes packed`);
        return 0;
      }
      if (sub === 'pack') {
        if (!dir || rest.length > 0) throw new CliError(`plugin pack takes the plugin folder and optionally the file to write\n\n${USAGE}`, 2);
        const target = out ? path.resolve(out) : null;
        const pkg = await checkFolder(dir, target);
        if (!pkg) return 1;
        const dest = target ?? path.resolve(`${pkg.manifest.id}-${pkg.manifest.version}.stplugin.zip`);
        if (fs.existsSync(dest) && fs.statSync(dest).isDirectory()) throw new CliError(`Cannot write ${dest}: it is a directory`);
        // Written beside the target and renamed over it, so a failed write never leaves half a package.
        const tmp = path.join(path.dirname(dest), `.${path.basename(dest)}.${process.pid}.tmp`);
        try {
          fs.writeFileSync(tmp, pkg.zip);
          fs.renameSync(tmp, dest);
        } catch (error) {
          fs.rmSync(tmp, { force: true });
          throw new CliError(`Cannot write ${dest}: ${(error as Error).message}`);
        }
        console.log(`Wrote ${dest}: ${pkg.manifest.id} ${pkg.manifest.version} (${pkg.manifest.type}), ${pkg.files.size} files, ${pkg.zip.length} bytes`);
        return 0;
      }
      throw new CliError(`plugin takes "validate <dir>" or "pack <dir> [out.stplugin.zip]"\n\n${USAGE}`, 2);
    }
    case 'help':
      console.log(USAGE);
      return 0;
    case undefined:
      throw new CliError(`No command given\n\n${USAGE}`, 2);
    default:
      throw new CliError(`Unknown command "${command}"\n\n${USAGE}`, 2);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    if (error instanceof CliError || error instanceof ConfigError) {
      console.error(`error: ${error.message}`);
      process.exitCode = error instanceof CliError ? error.exitCode : 1;
    } else {
      console.error(error);
      process.exitCode = 1;
    }
  },
);
