// Shared UI state and helpers: the confirmation dialog, toasts, colours and initials for avatars and chips.
import { reactive } from 'vue';
import { ApiError } from '../api';

export interface ConfirmRequest {
  title: string;
  message?: string;
  confirmLabel?: string;
  danger?: boolean;
  resolve: (ok: boolean) => void;
}
export interface Toast {
  id: number;
  kind: 'info' | 'error' | 'success';
  text: string;
}

export const ui = reactive<{ confirm: ConfirmRequest | null; toasts: Toast[] }>({ confirm: null, toasts: [] });

/** Asks the user to confirm an action in a dialog (testids confirm-dialog, confirm-ok, confirm-cancel). */
export function confirmDialog(opts: Omit<ConfirmRequest, 'resolve'>): Promise<boolean> {
  ui.confirm?.resolve(false);
  return new Promise((resolve) => {
    ui.confirm = { ...opts, resolve: (ok) => { ui.confirm = null; resolve(ok); } };
  });
}

let toastSeq = 0;
/** Shows a short message at the bottom of the screen. */
export function toast(text: string, kind: Toast['kind'] = 'info', ms = kind === 'error' ? 6000 : 3000) {
  const t = { id: ++toastSeq, kind, text };
  ui.toasts.push(t);
  setTimeout(() => dismissToast(t.id), ms);
}
export function dismissToast(id: number) {
  const i = ui.toasts.findIndex((t) => t.id === id);
  if (i >= 0) ui.toasts.splice(i, 1);
}

/** The readable message of an error thrown by gql()/rest(). */
export function errorMessage(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

const PALETTE = ['#4f46e5', '#0891b2', '#059669', '#d97706', '#db2777', '#7c3aed', '#2563eb', '#dc2626', '#0d9488', '#65a30d'];
function hash(s: string) {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) | 0;
  return Math.abs(h);
}
/** A stable colour for an id (avatars, base icons). */
export function colorFor(id: string) {
  return PALETTE[hash(id) % PALETTE.length];
}
/** A stable chip colour class (c0..c9) for a choice, by its position among the options. */
export function chipClass(value: string, options: string[] | null | undefined) {
  const i = options?.indexOf(value) ?? -1;
  return `c${(i >= 0 ? i : hash(value)) % 10}`;
}
export function initials(name: string) {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  if (!parts.length) return '?';
  return (parts[0][0] + (parts.length > 1 ? parts[parts.length - 1][0] : '')).toUpperCase();
}
export function formatCount(n: number) {
  return n.toLocaleString('en-US');
}
export function formatDateTime(iso: string | null | undefined) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}
