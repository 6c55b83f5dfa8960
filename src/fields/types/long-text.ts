// long_text: a string of up to 1,000,000 characters.
import { textLike } from './text-like.js';

export const longText = textLike('long_text', 1_000_000);
