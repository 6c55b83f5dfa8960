// email: a string shaped like local@domain.tld.
import { textLike } from './text-like.js';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export const email = textLike('email', 320, (s) => (EMAIL.test(s) ? null : `"${s.slice(0, 50)}" is not an email address`));
