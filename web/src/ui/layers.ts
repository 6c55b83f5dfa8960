// Modal layers (dialogs and the record drawer): a stack where only the top layer answers Escape and keeps Tab and Shift+Tab
// inside itself; focus moves into a layer when it opens and back to the element that opened it when it closes.
import { onBeforeUnmount, onMounted, onUnmounted, type Ref } from 'vue';

const TABBABLE = [
  'a[href]', 'area[href]', 'button:not([disabled])', 'input:not([disabled]):not([type="hidden"])', 'select:not([disabled])',
  'textarea:not([disabled])', 'iframe', 'summary', '[contenteditable=""]', '[contenteditable="true"]', '[tabindex]',
].join(', ');

function visible(el: HTMLElement): boolean {
  return el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
}

/** The elements of `root` that Tab reaches, in document order (focus sentinels left out). */
export function tabbables(root: HTMLElement | null | undefined): HTMLElement[] {
  if (!root) return [];
  const radioSeen = new Set<string>();
  return Array.from(root.querySelectorAll<HTMLElement>(TABBABLE)).filter((el) => {
    if (el.hasAttribute('data-focus-sentinel') || el.tabIndex < 0 || el.closest('[inert]') || !visible(el)) return false;
    // One stop per radio group: the checked radio, else the first.
    if (el instanceof HTMLInputElement && el.type === 'radio' && el.name) {
      const key = `${el.form ? 'f' : ''}:${el.name}`;
      const group = Array.from(root.querySelectorAll<HTMLInputElement>(`input[type="radio"][name="${CSS.escape(el.name)}"]`));
      const stop = group.find((r) => r.checked) ?? group[0];
      if (el !== stop || radioSeen.has(key)) return false;
      radioSeen.add(key);
    }
    return true;
  });
}

interface Layer {
  /** The element focus must stay in (the dialog box, the drawer). */
  panel: () => HTMLElement | null;
  /** Escape pressed while this layer is on top; undefined: Escape does nothing. */
  onEscape?: (e: KeyboardEvent) => void;
}

const stack: Layer[] = [];
/** The opener of a layer that is closing, for a layer opened in its place in the same update (a dialog followed by the next). */
let handoff: HTMLElement | null = null;

function onKeydown(e: KeyboardEvent) {
  const top = stack[stack.length - 1];
  if (!top || e.defaultPrevented) return;
  if (e.key === 'Escape') {
    if (!top.onEscape) return;
    // The layer below (or a page handler on window) must not see the same key.
    e.stopPropagation();
    top.onEscape(e);
  } else if (e.key === 'Tab' && !e.altKey && !e.ctrlKey && !e.metaKey) {
    trapTab(e, top.panel());
  }
}

function trapTab(e: KeyboardEvent, panel: HTMLElement | null) {
  if (!panel) return;
  const items = tabbables(panel);
  const active = document.activeElement as HTMLElement | null;
  if (!items.length) {
    e.preventDefault();
    panel.focus();
    return;
  }
  const first = items[0];
  const last = items[items.length - 1];
  const inside = !!active && panel.contains(active);
  if (!inside || active === panel || (e.shiftKey && active === first) || (!e.shiftKey && active === last)) {
    e.preventDefault();
    (e.shiftKey ? last : first).focus();
  }
}

/** A focus sentinel was reached (focus left the last or first element some other way, e.g. out of an iframe): wrap around. */
export function wrapFocus(panel: HTMLElement | null, to: 'first' | 'last') {
  const items = tabbables(panel);
  const target = to === 'first' ? items[0] : items[items.length - 1];
  (target ?? panel)?.focus();
}

/**
 * Makes a component a modal layer while it is mounted. `panel` is the element that keeps focus (give it tabindex="-1");
 * `initialFocus` picks where focus goes on opening (default: an [autofocus] or [data-autofocus] element, else the first
 * tabbable element of `[data-layer-body]`, else the first tabbable element, else the panel).
 */
export function useModalLayer(panel: Ref<HTMLElement | null>, opts: { onEscape?: (e: KeyboardEvent) => void; initialFocus?: 'auto' | 'panel' } = {}) {
  const opener = document.activeElement instanceof HTMLElement && document.activeElement !== document.body ? document.activeElement : handoff;
  const layer: Layer = { panel: () => panel.value, onEscape: opts.onEscape };
  let focusWasInside = false;

  onMounted(() => {
    stack.push(layer);
    if (stack.length === 1) document.addEventListener('keydown', onKeydown);
    const el = panel.value;
    if (!el || el.contains(document.activeElement)) return;
    if (opts.initialFocus === 'panel') {
      el.focus();
      return;
    }
    const auto = el.querySelector<HTMLElement>('[autofocus], [data-autofocus]');
    const body = el.querySelector<HTMLElement>('[data-layer-body]');
    const target = (auto && visible(auto) ? auto : null) ?? tabbables(body)[0] ?? tabbables(el)[0] ?? el;
    target.focus();
  });

  onBeforeUnmount(() => {
    const active = document.activeElement;
    focusWasInside = !active || active === document.body || !!panel.value?.contains(active);
    if (opener?.isConnected) {
      handoff = opener;
      setTimeout(() => (handoff = null));
    }
  });

  onUnmounted(() => {
    const i = stack.lastIndexOf(layer);
    if (i >= 0) stack.splice(i, 1);
    if (!stack.length) document.removeEventListener('keydown', onKeydown);
    // Back to the opener, unless the page has already put focus somewhere on purpose.
    const active = document.activeElement;
    if (!focusWasInside && active && active !== document.body) return;
    // Another layer opened meanwhile (one dialog replaced by the next) and has focus: leave it there.
    if (active && active !== document.body && stack.some((l) => l.panel()?.contains(active))) return;
    if (opener && opener.isConnected && visible(opener)) {
      opener.focus();
      return;
    }
    const below = stack[stack.length - 1]?.panel();
    if (below) wrapFocus(below, 'first');
  });
}
