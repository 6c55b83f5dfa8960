// phone: digits with optional +, spaces, dots, dashes and parentheses.
import { textLike } from './text-like.js';

const PHONE = /^\+?[0-9 ().-]{3,40}$/;

export const phone = textLike('phone', 40, (s) =>
  PHONE.test(s) && s.replace(/\D/g, '').length >= 3 ? null : `"${s.slice(0, 50)}" is not a phone number`,
);
