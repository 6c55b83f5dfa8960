// The app-wide confirmation dialog and toasts, rendered once by UiHost (mounted in App.vue).
import { reactive } from 'vue';

export interface ConfirmOptions {
  title: string;
  message?: string;
  confirmLabel?: string;
  danger?: boolean;
  /** When set, the user must type this text before confirming (for destructive actions). */
  typeToConfirm?: string;
}
export interface ConfirmRequest extends ConfirmOptions {
  id: number;
  resolve: (ok: boolean) => void;
}

export type ToastKind = 'info' | 'success' | 'warning' | 'error';
export interface Toast {
  id: number;
  kind: ToastKind;
  text: string;
  /** Who says it, for notices of ui plugins (ui.notify) and of the plugin host: the plugin's name. */
  source?: string;
}

/** At most this many toasts at once: a flood (of a plugin's notices, say) must not bury the page. */
const MAX_TOASTS = 5;

export const feedback = reactive<{ confirm: ConfirmRequest | null; toasts: Toast[] }>({ confirm: null, toasts: [] });

let confirmSeq = 0;
/**
 * Asks the user to confirm in a dialog; resolves true when confirmed, false when cancelled (Cancel, Escape, the backdrop,
 * or another confirmation taking its place). Test ids: confirm-dialog, confirm-message, confirm-type, confirm-ok, confirm-cancel.
 */
export function confirmDialog(opts: ConfirmOptions): Promise<boolean> {
  feedback.confirm?.resolve(false);
  return new Promise((resolve) => {
    const id = ++confirmSeq;
    feedback.confirm = {
      ...opts,
      id,
      resolve: (ok) => {
        if (feedback.confirm?.id === id) feedback.confirm = null;
        resolve(ok);
      },
    };
  });
}

let toastSeq = 0;
/** Shows a short message at the bottom of the screen (test id toast, or plugin-toast when it has a source). */
export function toast(text: string, kind: ToastKind = 'info', opts: { source?: string; ms?: number } = {}) {
  const t: Toast = { id: ++toastSeq, kind, text, source: opts.source };
  feedback.toasts.push(t);
  while (feedback.toasts.length > MAX_TOASTS) feedback.toasts.shift();
  setTimeout(() => dismissToast(t.id), opts.ms ?? (kind === 'error' || opts.source ? 6000 : 3000));
}

export function dismissToast(id: number) {
  const i = feedback.toasts.findIndex((t) => t.id === id);
  if (i >= 0) feedback.toasts.splice(i, 1);
}
