// text: a single string of up to 100,000 characters.
import { textLike } from './text-like.js';

export const text = textLike('text', 100_000);
