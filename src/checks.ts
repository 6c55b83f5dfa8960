// Checks of input values shared by the services and the plugin package reader: plain objects, names and descriptions.
import { badRequest } from './errors.js';

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A name of 1 to `max` characters, trimmed; otherwise a 400 naming `name`. */
export function checkName(name: unknown, max = 255): string {
  if (typeof name !== 'string' || name.trim() === '' || name.length > max) {
    throw badRequest(`name must be 1 to ${max} characters`, [{ field: 'name', message: `must be 1 to ${max} characters` }]);
  }
  return name.trim();
}

/** An optional description of at most 10,000 characters; absent or null reads as empty. */
export function checkDescription(d: unknown): string {
  if (d === undefined || d === null) return '';
  if (typeof d !== 'string' || d.length > 10_000) throw badRequest('description must be a string of at most 10,000 characters', [{ field: 'description', message: 'must be a string of at most 10,000 characters' }]);
  return d;
}
