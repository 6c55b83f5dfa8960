// Reads an uploaded .stplugin.zip without trusting it (contract section 7, spec 3 section 9): safe names, no links, bounded entries and inflated bytes, a valid manifest.
import JSZip from 'jszip';
import { checkManifest, MANIFEST_FILE, type Manifest, type Problem } from './manifest.js';

export type { Problem } from './manifest.js';

export const MAX_ENTRIES = 2000;
export const MAX_BYTES = 100 * 1024 * 1024;

/** Path of problems about the archive as a whole rather than one of its entries. */
export const ARCHIVE = '';

/** A refused package: `problems` lists every reason found (one reason alone when a size limit stopped the reading). */
export class PackageError extends Error {
  constructor(readonly problems: Problem[]) {
    super(`Invalid plugin package: ${problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ')}`);
    this.name = 'PackageError';
  }
}

export interface ReadOptions {
  /** The service's version, which the manifest's engines.table must include. */
  hostVersion: string;
  maxEntries?: number;
  maxBytes?: number;
}

export interface PluginPackage {
  manifest: Manifest;
  /** Regular files by archive path (directories are not listed). */
  files: Map<string, Buffer>;
}

const MiB = 1024 * 1024;
const formatBytes = (n: number) => (n % MiB === 0 ? `${n / MiB} MiB` : `${n} bytes`);

// Shared with the CLI, which checks a plugin folder against the same limits before zipping it.
export const tooManyEntries = (max: number): Problem => ({ path: ARCHIVE, message: `has more than ${max} entries` });
export const tooLarge = (max: number): Problem => ({ path: ARCHIVE, message: `inflates to more than ${formatBytes(max)}` });
export const SYMLINK_MESSAGE = 'is a symbolic link; a package may hold only regular files and directories';

const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

/**
 * Why an archive path is refused, or null. Checked on the name as stored in the archive: JSZip rewrites some of
 * these (`a/../b` to `b`) and passes others through (`/x`, `C:/x`, `..\x`), and other unzip tools treat them as paths.
 */
export function entryNameProblem(name: string, isDir: boolean): string | null {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains a control character';
  if (name === '') return 'has an empty name';
  if (name.startsWith('/') || name.startsWith('\\')) return 'is an absolute path';
  if (/^[a-z]:/i.test(name)) return 'is an absolute path (Windows drive)';
  if (name.includes('\\')) return 'contains a backslash; archive paths use "/"';
  // A directory's name ends with one "/"; that last empty segment is the only one allowed.
  const segments = (isDir && name.endsWith('/') ? name.slice(0, -1) : name).split('/');
  if (segments.includes('..')) return 'contains a ".." segment (path traversal)';
  if (segments.includes('.')) return 'contains a "." segment';
  if (segments.includes('')) return 'contains an empty segment ("//" or a trailing "/")';
  return null;
}

interface RawEntry {
  /** The name bytes as stored, decoded as UTF-8 (what JSZip does when no Unicode-path extra field overrides it). */
  name: string;
  /** Same bytes as latin1, to compare names exactly whatever their encoding. */
  rawKey: string;
  dir: boolean;
  externalAttributes: number;
}

class NotAZip extends Error {}

/**
 * The central directory as stored, located the way JSZip locates it. JSZip's own listing is keyed by the rewritten
 * name, so it hides repeated names and stops at nothing before building every entry; this walk sees every record
 * and stops counting as soon as there are too many.
 */
function centralDirectory(buf: Buffer, maxEntries: number): RawEntry[] | 'too-many' {
  const eocd = buf.lastIndexOf(Buffer.from('PK\x05\x06', 'latin1'));
  if (eocd < 0 || eocd + 22 > buf.length) throw new NotAZip('no end of central directory record');
  let records = buf.readUInt16LE(eocd + 10);
  let size = buf.readUInt32LE(eocd + 12);
  let offset = buf.readUInt32LE(eocd + 16);
  let expectedEnd = offset + size;
  const zip64 =
    buf.readUInt16LE(eocd + 4) === 0xffff || buf.readUInt16LE(eocd + 6) === 0xffff || buf.readUInt16LE(eocd + 8) === 0xffff ||
    records === 0xffff || size === 0xffffffff || offset === 0xffffffff;
  if (zip64) {
    const locator = buf.lastIndexOf(Buffer.from('PK\x06\x07', 'latin1'));
    if (locator < 0 || locator + 20 > buf.length) throw new NotAZip('no ZIP64 end of central directory locator');
    let end64 = Number(buf.readBigUInt64LE(locator + 8));
    if (end64 + 56 > buf.length || buf.readUInt32LE(end64) !== 0x06064b50) end64 = buf.lastIndexOf(Buffer.from('PK\x06\x06', 'latin1'));
    if (end64 < 0 || end64 + 56 > buf.length) throw new NotAZip('no ZIP64 end of central directory record');
    records = Number(buf.readBigUInt64LE(end64 + 32));
    size = Number(buf.readBigUInt64LE(end64 + 40));
    offset = Number(buf.readBigUInt64LE(end64 + 48));
    expectedEnd = offset + size + 20 + 12 + Number(buf.readBigUInt64LE(end64 + 4));
  }
  // Bytes before the archive (a self-extractor stub) shift every offset; JSZip corrects for them the same way.
  const shift = Math.max(0, eocd - expectedEnd);
  const entries: RawEntry[] = [];
  let at = shift + offset;
  while (at + 46 <= buf.length && buf.readUInt32LE(at) === 0x02014b50) {
    if (entries.length === maxEntries) return 'too-many';
    const nameLength = buf.readUInt16LE(at + 28);
    const extraLength = buf.readUInt16LE(at + 30);
    const commentLength = buf.readUInt16LE(at + 32);
    const externalAttributes = buf.readUInt32LE(at + 38);
    if (at + 46 + nameLength > buf.length) throw new NotAZip('truncated central directory');
    const bytes = buf.subarray(at + 46, at + 46 + nameLength);
    const name = bytes.toString('utf8');
    entries.push({ name, rawKey: bytes.toString('latin1'), dir: (externalAttributes & 0x10) !== 0 || name.endsWith('/'), externalAttributes });
    at += 46 + nameLength + extraLength + commentLength;
  }
  if (entries.length === 0 && records > 0) throw new NotAZip('the central directory is not where the archive says');
  return entries;
}

// JSZip's streaming interface (documented as ZipObject#internalStream, missing from its type declarations).
// Unlike nodeStream(), pausing it stops the inflater itself, which is how a zip bomb is cut off.
interface StreamHelper {
  on(event: 'data', fn: (chunk: Buffer) => void): StreamHelper;
  on(event: 'error', fn: (error: Error) => void): StreamHelper;
  on(event: 'end', fn: () => void): StreamHelper;
  pause(): StreamHelper;
  resume(): StreamHelper;
}

/**
 * Inflates one entry, counting the bytes that really come out of the inflater against `budget` (the archive's
 * declared sizes are never used): when the budget runs out the inflater is paused for good and 'too-large' returned.
 */
function inflate(file: JSZip.JSZipObject, budget: { left: number }): Promise<Buffer | 'too-large'> {
  return new Promise((resolve, reject) => {
    const stream = (file as unknown as { internalStream(type: 'nodebuffer'): StreamHelper }).internalStream('nodebuffer');
    const chunks: Buffer[] = [];
    let settled = false;
    stream
      .on('data', (chunk) => {
        if (settled) return;
        budget.left -= chunk.length;
        if (budget.left < 0) {
          settled = true;
          chunks.length = 0;
          stream.pause();
          resolve('too-large');
          return;
        }
        chunks.push(chunk);
      })
      .on('error', (error) => {
        if (settled) return;
        settled = true;
        reject(error);
      })
      .on('end', () => {
        if (settled) return;
        settled = true;
        resolve(Buffer.concat(chunks));
      })
      .resume();
  });
}

/**
 * Reads and checks a plugin package. Resolves to the manifest and the regular files; throws PackageError listing
 * every problem found: the archive's names, links and limits, then manifest.json and every manifest rule.
 * Entries with a refused name are neither inflated nor returned.
 */
export async function readPackage(zip: Buffer, opts: ReadOptions): Promise<PluginPackage> {
  const maxEntries = opts.maxEntries ?? MAX_ENTRIES;
  const maxBytes = opts.maxBytes ?? MAX_BYTES;
  const problems: Problem[] = [];
  const refuse = (p: Problem) => {
    if (!problems.some((q) => q.path === p.path && q.message === p.message)) problems.push(p);
  };

  let raw: RawEntry[] | 'too-many';
  try {
    raw = centralDirectory(zip, maxEntries);
  } catch (error) {
    throw new PackageError([{ path: ARCHIVE, message: `is not a readable zip archive (${(error as Error).message})` }]);
  }
  // Counted before JSZip builds an object for every entry: the limit is there to bound that work too.
  if (raw === 'too-many') throw new PackageError([tooManyEntries(maxEntries)]);
  let archive: JSZip;
  try {
    archive = await JSZip.loadAsync(zip);
  } catch (error) {
    throw new PackageError([{ path: ARCHIVE, message: `is not a readable zip archive (${(error as Error).message})` }]);
  }

  // Names, links and repeats, on the names as stored. A refused entry is neither inflated nor returned.
  const refusedNames = new Set<string>();
  const timesSeen = new Map<string, number>();
  for (const entry of raw) {
    const nameProblem = entryNameProblem(entry.name, entry.dir);
    if (nameProblem) refuse({ path: entry.name, message: nameProblem });
    // The file type bits sit in the upper half of the attributes whatever system the archive says made it.
    const link = ((entry.externalAttributes >>> 16) & S_IFMT) === S_IFLNK;
    if (link) refuse({ path: entry.name, message: SYMLINK_MESSAGE });
    // Two entries with one name: which one "the" file is depends on the tool, so the package is ambiguous.
    const times = (timesSeen.get(entry.rawKey) ?? 0) + 1;
    timesSeen.set(entry.rawKey, times);
    if (times === 2) refuse({ path: entry.name, message: 'appears more than once in the archive' });
    if (nameProblem || link || times > 1) refusedNames.add(entry.name);
  }

  // JSZip's view of the same entries: its names must be the stored ones, else it has rewritten them.
  const files: JSZip.JSZipObject[] = [];
  for (const file of Object.values(archive.files)) {
    const original = file.unsafeOriginalName ?? file.name;
    const nameProblem = entryNameProblem(original, file.dir);
    if (nameProblem) refuse({ path: original, message: nameProblem });
    else if (original !== file.name) refuse({ path: original, message: `was rewritten to ${JSON.stringify(file.name)} when read` });
    const mode = typeof file.unixPermissions === 'number' ? file.unixPermissions : 0;
    if ((mode & S_IFMT) === S_IFLNK) refuse({ path: original, message: SYMLINK_MESSAGE });
    const bad = nameProblem !== null || original !== file.name || (mode & S_IFMT) === S_IFLNK;
    if (!file.dir && !bad && !refusedNames.has(original)) files.push(file);
  }
  // Names that collapse into one (say through a Unicode-path extra field) leave JSZip with fewer entries than stored.
  const distinct = Object.keys(archive.files).length;
  if (distinct !== raw.length && problems.length === 0) {
    refuse({ path: ARCHIVE, message: `lists ${raw.length} entries but ${distinct} distinct names` });
  }

  const contents = new Map<string, Buffer>();
  const budget = { left: maxBytes };
  for (const file of files) {
    let data: Buffer | 'too-large';
    try {
      data = await inflate(file, budget);
    } catch (error) {
      refuse({ path: file.name, message: `cannot be inflated (${(error as Error).message})` });
      continue;
    }
    // Nothing after a size breach is read; the problems found so far are kept.
    if (data === 'too-large') throw new PackageError([...problems, tooLarge(maxBytes)]);
    contents.set(file.name, data);
  }

  const manifest = parseManifest(contents, refuse);
  if (manifest !== undefined) {
    for (const p of checkManifest(manifest, new Set(contents.keys()), opts.hostVersion)) refuse(p);
  }
  if (problems.length > 0) throw new PackageError(problems);
  return { manifest: manifest as Manifest, files: contents };
}

/** manifest.json at the root, as JSON; undefined (with the problem reported) when missing or unreadable. */
function parseManifest(contents: Map<string, Buffer>, refuse: (p: Problem) => void): unknown {
  const bytes = contents.get(MANIFEST_FILE);
  if (!bytes) {
    // The usual mistake is zipping the plugin's folder rather than its contents.
    const nested = [...contents.keys()].find((name) => name.endsWith(`/${MANIFEST_FILE}`));
    refuse({
      path: MANIFEST_FILE,
      message: nested ? `is missing at the package root (found ${nested}: zip the folder's contents, not the folder)` : 'is missing at the package root',
    });
    return undefined;
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    refuse({ path: MANIFEST_FILE, message: 'is not UTF-8 text' });
    return undefined;
  }
  try {
    // A byte-order mark is what some editors save; JSON.parse would stop at it.
    return JSON.parse(text.replace(/^\uFEFF/, '')) as unknown;
  } catch (error) {
    refuse({ path: MANIFEST_FILE, message: `is not valid JSON (${(error as Error).message})` });
    return undefined;
  }
}
