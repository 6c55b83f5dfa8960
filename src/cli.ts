// Command-line tools for operators: `backup <file>` writes a consistent online copy of the database; `help` lists commands.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { readConfig } from './config.js';

// The database file name, as DB_FILE in app.ts (test/backup.test.ts checks they agree). Not imported from there:
// app.ts loads the whole service (GraphQL schema, argon2, ...), which would triple this tool's start-up time.
const DB_FILE = 'table-service.db';

const USAGE = `Usage: tsx src/cli.ts <command> [arguments]

Commands:
  backup <file>   Write a consistent copy of <DATA_DIR>/${DB_FILE} to <file> (SQLite online backup).
                  Safe while the server is running and writing. An existing <file> is replaced.
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

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'backup': {
      if (args.length !== 1 || !args[0]) throw new CliError(`backup takes one argument, the file to write\n\n${USAGE}`, 2);
      const config = readConfig(process.env);
      const source = path.join(config.dataDir, DB_FILE);
      const r = await backupDatabase(source, args[0]);
      console.log(`Backed up ${source}`);
      console.log(`Wrote ${r.file}: ${r.bytes} bytes, ${r.pages} pages of ${r.pageSize} bytes, in ${r.millis} ms`);
      return 0;
    }
    case 'help':
    case '--help':
    case '-h':
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
    if (error instanceof CliError) {
      console.error(`error: ${error.message}`);
      process.exitCode = error.exitCode;
    } else {
      console.error(error);
      process.exitCode = 1;
    }
  },
);
