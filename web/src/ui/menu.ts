// Keyboard behaviour of menus (role="menu" with role="menuitem" children): arrows, Home and End move between items,
// a letter jumps to the next item starting with it, Escape closes and returns focus to the menu button, Tab closes.

/** The items of a menu that can take focus, in order. */
export function menuItems(menu: HTMLElement | null | undefined): HTMLElement[] {
  if (!menu) return [];
  return Array.from(menu.querySelectorAll<HTMLElement>('[role="menuitem"], [role="menuitemcheckbox"], [role="menuitemradio"]'))
    .filter((el) => !(el as HTMLButtonElement).disabled && el.getAttribute('aria-disabled') !== 'true' && el.getClientRects().length > 0);
}

export function focusMenuItem(menu: HTMLElement | null | undefined, which: 'first' | 'last') {
  const items = menuItems(menu);
  (which === 'first' ? items[0] : items[items.length - 1])?.focus();
}

/**
 * Handles a keydown inside an open menu. `close(refocus)` closes it; refocus true puts focus back on the menu button.
 * Returns whether the key was handled.
 */
export function onMenuKeydown(e: KeyboardEvent, menu: HTMLElement | null | undefined, close: (refocus: boolean) => void): boolean {
  const items = menuItems(menu);
  const i = items.indexOf(document.activeElement as HTMLElement);
  const go = (n: number) => {
    e.preventDefault();
    e.stopPropagation();
    if (items.length) items[(n + items.length) % items.length].focus();
  };
  switch (e.key) {
    case 'ArrowDown': go(i < 0 ? 0 : i + 1); return true;
    case 'ArrowUp': go(i < 0 ? items.length - 1 : i - 1); return true;
    case 'Home': case 'PageUp': go(0); return true;
    case 'End': case 'PageDown': go(items.length - 1); return true;
    case 'Escape':
      e.preventDefault();
      e.stopPropagation();
      close(true);
      return true;
    case 'Tab':
      // Focus goes back to the button first, so Tab carries on from there.
      close(true);
      return true;
    default:
      if (e.key.length === 1 && /\S/.test(e.key) && !e.ctrlKey && !e.metaKey && !e.altKey) {
        const ch = e.key.toLowerCase();
        for (let k = 1; k <= items.length; k++) {
          const item = items[(Math.max(i, 0) + k - (i < 0 ? 1 : 0)) % items.length];
          if ((item.textContent ?? '').trim().toLowerCase().replace(/^[^a-z0-9]+/, '').startsWith(ch)) {
            e.preventDefault();
            item.focus();
            return true;
          }
        }
      }
      return false;
  }
}
