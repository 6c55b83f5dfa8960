// What a UiDropdown tells the UiMenuItem elements inside it.
import type { InjectionKey } from 'vue';

export interface MenuContext {
  /** Closes the menu; `refocus` returns focus to its button. */
  close(refocus?: boolean): void;
}
export const MENU_KEY: InjectionKey<MenuContext> = Symbol('ui-menu');
