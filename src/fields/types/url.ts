// url: an absolute http, https, ftp or mailto URL.
import { textLike } from './text-like.js';

const SCHEMES = new Set(['http:', 'https:', 'ftp:', 'mailto:']);

export const url = textLike('url', 8192, (s) => {
  try {
    if (SCHEMES.has(new URL(s).protocol)) return null;
  } catch {
    /* not a URL */
  }
  return `"${s.slice(0, 50)}" is not an absolute http(s), ftp or mailto URL`;
});
