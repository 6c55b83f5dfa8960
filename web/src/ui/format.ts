// Formatting helpers of the UI kit: dates, durations, counts, JSON text, error messages, copying, and the colours and initials of avatars and chips.
import { ApiError } from '../api';

/** A timestamp as a short local date and time ("—" when absent). */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** "3 min ago" style text for recent timestamps, the date otherwise. */
export function formatRelative(iso: string | null | undefined): string {
  if (!iso) return '—';
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return iso;
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 0) return formatDate(iso);
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86400) return `${Math.round(s / 3600)} h ago`;
  return formatDate(iso);
}

/** Milliseconds as "840 ms" or "2.4 s". */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60000)} min ${Math.round((ms % 60000) / 1000)} s`;
}

/** Duration between two timestamps. */
export function durationBetween(start: string | null | undefined, end: string | null | undefined): string {
  if (!start || !end) return '—';
  return formatDuration(new Date(end).getTime() - new Date(start).getTime());
}

export function prettyJson(value: unknown): string {
  if (value === undefined) return '';
  return JSON.stringify(value, null, 2);
}

/** Parses JSON text; empty text is `undefined` when allowed. */
export function parseJsonText(text: string, opts: { allowEmpty?: boolean; expect?: 'object' | 'array' | 'any' } = {}):
  { ok: true; value: unknown } | { ok: false; error: string } {
  const trimmed = text.trim();
  if (!trimmed) return opts.allowEmpty ? { ok: true, value: undefined } : { ok: false, error: 'Required' };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (e) {
    return { ok: false, error: `Not valid JSON: ${(e as Error).message}` };
  }
  if (opts.expect === 'object' && (typeof value !== 'object' || value === null || Array.isArray(value))) return { ok: false, error: 'Must be a JSON object { … }' };
  if (opts.expect === 'array' && !Array.isArray(value)) return { ok: false, error: 'Must be a JSON array [ … ]' };
  return { ok: true, value };
}

/** The readable message of an error thrown by gql()/rest() (or anything else), to show for a failed call. */
export function errorText(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

/** Copies text with the Clipboard API, falling back to a hidden textarea and execCommand (plain http, older browsers). */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    /* fall through to the fallback */
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.top = '-1000px';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  area.setSelectionRange(0, text.length);
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  document.body.removeChild(area);
  return ok;
}

/** Colour of a status badge. */
export function statusColor(status: string | null | undefined): string {
  switch (status) {
    case 'enabled': case 'success': case 'completed': case 'active': case 'valid':
      return 'green';
    case 'error': case 'failed': case 'revoked':
      return 'red';
    case 'running': case 'queued':
      return 'blue';
    case 'skipped': case 'expired':
      return 'amber';
    default:
      return 'grey';
  }
}

/** Compares two SemVer strings by their numeric parts (a pre-release sorts before its release). */
export function compareVersions(a: string, b: string): number {
  const split = (v: string) => {
    const [core, pre] = v.split('+')[0].split(/-(.*)/s);
    return { nums: core.split('.').map((n) => Number(n) || 0), pre: pre ?? '' };
  };
  const x = split(a);
  const y = split(b);
  for (let i = 0; i < 3; i++) if ((x.nums[i] ?? 0) !== (y.nums[i] ?? 0)) return (x.nums[i] ?? 0) - (y.nums[i] ?? 0);
  if (x.pre === y.pre) return 0;
  if (!x.pre) return 1;
  if (!y.pre) return -1;
  return x.pre < y.pre ? -1 : 1;
}

/** A timestamp as a short local date and time without seconds ("" when absent): table cells, record times. */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

const PALETTE = ['#4f46e5', '#0891b2', '#059669', '#d97706', '#db2777', '#7c3aed', '#2563eb', '#dc2626', '#0d9488', '#65a30d'];
function hash(s: string) {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return Math.abs(h);
}
/** A stable colour for an id (avatars, base icons). */
export function colorFor(id: string): string {
  return PALETTE[hash(id) % PALETTE.length];
}
/** A stable chip colour class (c0..c9) for a choice, by its position among the options. */
export function chipClass(value: string, options: string[] | null | undefined): string {
  const i = options?.indexOf(value) ?? -1;
  return `c${(i >= 0 ? i : hash(value)) % 10}`;
}
export function initials(name: string): string {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  if (!parts.length) return '?';
  return (parts[0][0] + (parts.length > 1 ? parts[parts.length - 1][0] : '')).toUpperCase();
}
