// Notices of ui plugins (ui.notify) and of the host itself: one list for the page, shown by a single PluginToasts.
import { reactive } from 'vue';

export interface Toast {
  id: number;
  message: string;
  type: 'info' | 'success' | 'warning' | 'error';
  /** Who says it: the plugin's name. */
  source: string;
}

export const toasts = reactive<Toast[]>([]);
let next = 1;

export function showToast(t: Omit<Toast, 'id'>, ms = 6000) {
  const id = next++;
  toasts.push({ ...t, id });
  // A flood of notices from one plugin must not bury the page.
  while (toasts.length > 5) toasts.shift();
  setTimeout(() => dismissToast(id), ms);
}

export function dismissToast(id: number) {
  const i = toasts.findIndex((t) => t.id === id);
  if (i >= 0) toasts.splice(i, 1);
}

// Every PluginEntries registers; the first one still mounted renders the toasts, so they show once however many there are.
const hosts = reactive<number[]>([]);
let nextHost = 1;
export function registerToastHost(): { id: number; release(): void } {
  const id = nextHost++;
  hosts.push(id);
  return {
    id,
    release() {
      const i = hosts.indexOf(id);
      if (i >= 0) hosts.splice(i, 1);
    },
  };
}
export const isToastHost = (id: number) => hosts[0] === id;
