// The plugin manifest (spec 3, 2.1-2.4 and 9): its JSON Schema, its TypeScript types and checkManifest, which lists every problem.
import { Ajv, type ErrorObject } from 'ajv';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { isIP } from 'node:net';
import semver from 'semver';
import { isObject } from '../src/checks.js';

export type PluginType = 'ui' | 'script';
export type Access = 'read' | 'write';

export const EXTENSION_POINT_TYPES = [
  'toolbar-button',
  'side-panel',
  'base-menu',
  'record-detail-block',
  'home-menu',
  'dashboard-widget',
] as const;
export type ExtensionPointType = (typeof EXTENSION_POINT_TYPES)[number];

export interface ExtensionPoint {
  type: ExtensionPointType;
  title?: string;
  icon?: string;
  requiresSelection?: boolean;
  /** 1 to 1000. */
  maxSelection?: number;
}

export interface EndpointDecl {
  /** `^[a-z][a-z0-9-]*$`, unique within the manifest. */
  name: string;
  /** A `.py` file in the package. */
  entry: string;
  description?: string;
  /** Whole seconds, 1 to 300 (the host's default is 30). */
  timeout?: number;
}

export interface Permissions {
  records?: Access;
  tables?: Access;
  storage?: true;
  /** Domain names or IP literals, no scheme, port or path; subdomains of an entry are allowed too (spec 3, 4.2). */
  network?: string[];
}

export interface Manifest {
  id: string;
  name: string;
  description?: string;
  author?: { name?: string; url?: string; email?: string };
  version: string;
  type: PluginType;
  apiVersion: '1';
  engines: { table: string };
  /** A `.js` file for ui plugins, a `.py` file for script plugins. */
  entry: string;
  permissions?: Permissions;
  /** ui plugins only, at least one. */
  extensionPoints?: ExtensionPoint[];
  configSchema?: Record<string, unknown>;
  assets?: { styles?: string[]; scripts?: string[] };
  endpoints?: EndpointDecl[];
  /** script plugins only. */
  script?: { timeout?: number };
}

/** One reason a package is refused: `path` is a JSON pointer into manifest.json (`manifest.json#/entry`) or an archive path. */
export interface Problem {
  path: string;
  message: string;
}

export const MANIFEST_FILE = 'manifest.json';
const ID_PATTERN = '^[a-z0-9]+([.-][a-z0-9]+)*$';
const ENDPOINT_NAME_PATTERN = '^[a-z][a-z0-9-]*$';

// ajv's "must match pattern ..." says nothing a plugin author can act on; these say what is wanted.
const PATTERN_MESSAGES: Record<string, string> = {
  [ID_PATTERN]: 'must be lowercase letters and digits in parts joined by "." or "-" (reverse-domain form, e.g. com.example.my-plugin)',
  [ENDPOINT_NAME_PATTERN]: 'must start with a lowercase letter followed by lowercase letters, digits or "-"',
};

const stringArray = { type: 'array', items: { type: 'string', minLength: 1 } } as const;
const access = { type: 'string', enum: ['read', 'write'] } as const;

/**
 * The structural rules. Rules that depend on other fields (the plugin type, the package's files, the host version)
 * are in checkManifest, so that their messages can say why; unknown keys are refused at every level so that a
 * typo (`permisions`, `maxSelections`) is reported rather than silently meaning "nothing declared".
 */
export const manifestSchema = {
  type: 'object',
  required: ['id', 'name', 'version', 'type', 'apiVersion', 'engines', 'entry'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', maxLength: 100, pattern: ID_PATTERN },
    name: { type: 'string', minLength: 1 },
    description: { type: 'string' },
    author: {
      type: 'object',
      additionalProperties: false,
      properties: { name: { type: 'string' }, url: { type: 'string' }, email: { type: 'string' } },
    },
    version: { type: 'string', minLength: 1 },
    type: { type: 'string', enum: ['ui', 'script'] },
    // const alone: a number 1 is then reported once, as 'must be "1"', rather than also as 'must be a string'.
    apiVersion: { const: '1' },
    engines: {
      type: 'object',
      required: ['table'],
      additionalProperties: false,
      properties: { table: { type: 'string', minLength: 1 } },
    },
    entry: { type: 'string', minLength: 1 },
    permissions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        records: access,
        tables: access,
        storage: { const: true },
        network: stringArray,
      },
    },
    extensionPoints: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type'],
        additionalProperties: false,
        properties: {
          type: { type: 'string', enum: [...EXTENSION_POINT_TYPES] },
          title: { type: 'string' },
          icon: { type: 'string' },
          requiresSelection: { type: 'boolean' },
          maxSelection: { type: 'integer', minimum: 1, maximum: 1000 },
        },
      },
    },
    configSchema: { type: 'object' },
    assets: {
      type: 'object',
      additionalProperties: false,
      properties: { styles: stringArray, scripts: stringArray },
    },
    endpoints: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'entry'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', pattern: ENDPOINT_NAME_PATTERN },
          entry: { type: 'string', minLength: 1 },
          description: { type: 'string' },
          timeout: { type: 'integer', minimum: 1, maximum: 300 },
        },
      },
    },
    script: {
      type: 'object',
      additionalProperties: false,
      properties: { timeout: { type: 'number', exclusiveMinimum: 0, maximum: 300 } },
    },
  },
} as const;

// verbose: the error then carries its parent schema, which lists the allowed keys for "unknown key" messages.
const validateShape = new Ajv({ allErrors: true, verbose: true }).compile(manifestSchema);

// ajv-formats is CommonJS with a `default` property; take the plugin whichever way the loader hands it over.
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const addFormats: FormatsPlugin =
  (addFormatsModule as unknown as { default?: FormatsPlugin }).default ?? (addFormatsModule as unknown as FormatsPlugin);

/**
 * Compiles a plugin's configSchema the one way the host validates configurations: JSON Schema 2020-12
 * (a schema naming another `$schema` draft does not compile), with the standard formats, and not strict about
 * unknown keywords, which configuration UIs use as hints. A fresh ajv each time: two plugins may use the same `$id`.
 * Throws ajv's error when the schema does not compile.
 */
export function compileConfigSchema(schema: Record<string, unknown>): ValidateFunction {
  const ajv = new Ajv2020({ allErrors: true, strict: false, logger: false });
  addFormats(ajv);
  return ajv.compile(schema);
}

const escapePointer = (segment: string | number) => String(segment).replace(/~/g, '~0').replace(/\//g, '~1');
const at = (...segments: Array<string | number>) => `${MANIFEST_FILE}#${segments.map((s) => `/${escapePointer(s)}`).join('')}`;

function shapeProblem(e: ErrorObject): Problem {
  const here = `${MANIFEST_FILE}#${e.instancePath}`;
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required':
      return { path: `${here}/${escapePointer(String(params.missingProperty))}`, message: 'is required' };
    case 'additionalProperties': {
      const allowed = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      return { path: `${here}/${escapePointer(String(params.additionalProperty))}`, message: `is not an allowed key (allowed: ${allowed.join(', ')})` };
    }
    case 'type': {
      const names: Record<string, string> = { object: 'an object', array: 'an array', string: 'a string', integer: 'an integer', number: 'a number', boolean: 'a boolean' };
      return { path: here, message: `must be ${names[String(params.type)] ?? String(params.type)}` };
    }
    case 'enum':
      return { path: here, message: `must be one of: ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    case 'const':
      return { path: here, message: `must be ${JSON.stringify(params.allowedValue)}` };
    case 'pattern':
      return { path: here, message: PATTERN_MESSAGES[String(params.pattern)] ?? `must match ${String(params.pattern)}` };
    case 'minLength':
      if (params.limit === 1) return { path: here, message: 'must not be empty' };
      return { path: here, message: e.message ?? 'is too short' };
    default:
      return { path: here, message: e.message ?? `breaks the ${e.keyword} rule` };
  }
}


/** Canonical SemVer 2.0 only: node-semver also accepts `v1.2.3`, `=1.2.3` and spaces, and the version ends up in URLs. */
function isSemver(v: string): boolean {
  return semver.valid(v) !== null && /^[0-9]/.test(v) && v.trim() === v;
}

// A DNS name: letters, digits, "-" and "_" in dot-separated labels of 1 to 63 characters, at most 253 in all.
// Non-ASCII names must be given in their punycode (xn--) form, which is what the proxy compares against.
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/i;
function networkEntryProblem(entry: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry)) return 'must be a domain name or IP address without a scheme (no "https://")';
  if (/[/?#]/.test(entry)) return 'must be a domain name or IP address without a path';
  const bare = entry.startsWith('[') && entry.endsWith(']') ? entry.slice(1, -1) : entry;
  if (isIP(bare) === 6 || isIP(entry) === 4) return null;
  // The host compares case-insensitively and ignores a final dot, so both are accepted here.
  const labels = entry.replace(/\.$/, '').split('.');
  // A name ending in a numeric label is parsed as an IPv4 address by URL parsers (1.2.3, 999.1.1.1): not a domain.
  const numericEnd = /^(0x[0-9a-f]*|[0-9]+)$/i.test(labels[labels.length - 1] ?? '');
  if (entry.length > 253 || numericEnd || !labels.every((label) => LABEL.test(label))) {
    return /:\d+$/.test(entry)
      ? 'must be a domain name or IP address without a port'
      : 'must be a domain name (ASCII letters, digits, "-"; punycode for other scripts) or an IP address';
  }
  return null;
}

/**
 * Every problem of a manifest, for a package holding `files` (archive paths of regular files) on a host at
 * `hostVersion`. An empty list means the manifest can be used as a Manifest.
 */
export function checkManifest(manifest: unknown, files: Set<string>, hostVersion: string): Problem[] {
  const problems: Problem[] = [];
  if (!validateShape(manifest)) problems.push(...(validateShape.errors ?? []).map(shapeProblem));
  // The rules below read whatever parts have the right type, so that one broken field hides no other problem.
  const m = isObject(manifest) ? manifest : {};
  const type = m.type === 'ui' || m.type === 'script' ? m.type : undefined;
  const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

  /** A path named in the manifest must be a file of the package, with the right extension. */
  const needFile = (value: unknown, ext: string | undefined, ...where: Array<string | number>) => {
    if (!str(value)) return;
    if (ext && !value.endsWith(ext)) problems.push({ path: at(...where), message: `must be a ${ext} file` });
    if (!files.has(value)) problems.push({ path: at(...where), message: `names ${JSON.stringify(value)}, which is not a file in the package` });
  };

  if (str(m.version) && !isSemver(m.version)) problems.push({ path: at('version'), message: 'must be a SemVer version such as 1.0.0' });

  if (isObject(m.engines) && str(m.engines.table)) {
    const range = m.engines.table;
    if (semver.validRange(range) === null) {
      problems.push({ path: at('engines', 'table'), message: 'must be a node-semver range such as ">=0.1.0 <2.0.0"' });
    } else if (!semver.satisfies(hostVersion, range, { includePrerelease: true })) {
      problems.push({ path: at('engines', 'table'), message: `does not include this service's version ${hostVersion}` });
    }
  }

  needFile(m.entry, type === 'ui' ? '.js' : type === 'script' ? '.py' : undefined, 'entry');

  if (isObject(m.assets)) {
    for (const [key, ext] of [['styles', '.css'], ['scripts', '.js']] as const) {
      const list = m.assets[key];
      if (Array.isArray(list)) list.forEach((v, i) => needFile(v, ext, 'assets', key, i));
    }
  }

  if (Array.isArray(m.endpoints)) {
    const seen = new Map<string, number>();
    m.endpoints.forEach((ep, i) => {
      if (!isObject(ep)) return;
      if (str(ep.name)) {
        const first = seen.get(ep.name);
        if (first !== undefined) problems.push({ path: at('endpoints', i, 'name'), message: `repeats the name of endpoints/${first}` });
        else seen.set(ep.name, i);
      }
      needFile(ep.entry, '.py', 'endpoints', i, 'entry');
    });
  }

  if (m.script !== undefined && type === 'ui') problems.push({ path: at('script'), message: 'only script plugins have script settings' });

  if (type === 'script' && m.extensionPoints !== undefined) {
    problems.push({ path: at('extensionPoints'), message: 'only ui plugins have extension points' });
  }
  if (type === 'ui') {
    if (m.extensionPoints === undefined) problems.push({ path: at('extensionPoints'), message: 'is required for a ui plugin (at least one)' });
    else if (Array.isArray(m.extensionPoints)) {
      const points = m.extensionPoints;
      if (points.length === 0) problems.push({ path: at('extensionPoints'), message: 'a ui plugin needs at least one extension point' });
      const hasButton = points.some((p) => isObject(p) && p.type === 'toolbar-button');
      points.forEach((p, i) => {
        if (isObject(p) && p.type === 'side-panel' && !hasButton) {
          // spec 3, 2.3 rule 1: a side panel opens only from a toolbar button, so alone it could never be opened.
          problems.push({ path: at('extensionPoints', i), message: 'a side-panel needs a toolbar-button in the same manifest to open it' });
        }
      });
    }
  }

  if (isObject(m.permissions) && Array.isArray(m.permissions.network)) {
    m.permissions.network.forEach((entry, i) => {
      if (!str(entry)) return;
      const message = networkEntryProblem(entry);
      if (message) problems.push({ path: at('permissions', 'network', i), message });
    });
  }

  if (isObject(m.configSchema)) {
    try {
      compileConfigSchema(m.configSchema);
    } catch (error) {
      problems.push({ path: at('configSchema'), message: `is not a valid JSON Schema (2020-12): ${(error as Error).message}` });
    }
  }

  // Two rules can meet on one spot (an extension check and a missing file are kept; exact repeats are not).
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}\n${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
