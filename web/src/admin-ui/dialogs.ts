// Promise-based confirmation dialogs and toasts for the administration and workflow pages (rendered by UiHost).
import { reactive } from 'vue';

export interface ConfirmRequest {
  title: string;
  message: string;
  confirmLabel?: string;
  danger?: boolean;
  /** When set, the user must type this text before confirming (for destructive actions). */
  typeToConfirm?: string;
  resolve: (ok: boolean) => void;
}

export interface Toast { id: number; message: string; kind: 'info' | 'success' | 'error' }

export const dialogState = reactive<{ confirm: ConfirmRequest | null; toasts: Toast[] }>({ confirm: null, toasts: [] });

/** Asks the user to confirm; resolves true when confirmed. */
export function confirmAction(opts: Omit<ConfirmRequest, 'resolve'>): Promise<boolean> {
  dialogState.confirm?.resolve(false);
  return new Promise((resolve) => {
    dialogState.confirm = { ...opts, resolve };
  });
}

let nextToast = 1;
/** Shows a short message in the corner for a few seconds. */
export function notify(message: string, kind: Toast['kind'] = 'success') {
  const id = nextToast++;
  dialogState.toasts.push({ id, message, kind });
  setTimeout(() => {
    const i = dialogState.toasts.findIndex((t) => t.id === id);
    if (i >= 0) dialogState.toasts.splice(i, 1);
  }, kind === 'error' ? 6000 : 3200);
}
