// Validation of the `options` list shared by single_select and multi_select.
import { ValueError } from '../field-type.js';

export function normalizeOptions(options: unknown): string[] {
  if (!Array.isArray(options)) throw new ValueError('options must be an array of strings');
  const seen = new Set<string>();
  for (const o of options) {
    if (typeof o !== 'string' || o.trim() === '') throw new ValueError('every option must be a non-empty string');
    if (o.length > 255) throw new ValueError('an option is longer than 255 characters');
    if (seen.has(o)) throw new ValueError(`option "${o}" appears twice`);
    seen.add(o);
  }
  return options as string[];
}
