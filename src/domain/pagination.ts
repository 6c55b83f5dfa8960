// Page arguments shared by every list: positive integers, page size clamped to the maximum.
import { badRequest } from '../errors.js';

export interface PageArgs {
  page: number;
  pageSize: number;
  offset: number;
}

export function pageArgs(
  page: number | null | undefined,
  pageSize: number | null | undefined,
  limits: { defaultSize: number; maxSize: number; sizeName?: string },
): PageArgs {
  const p = page ?? 1;
  const s = pageSize ?? limits.defaultSize;
  if (!Number.isInteger(p) || p < 1) throw badRequest('page must be a positive integer', [{ field: 'page', message: 'must be a positive integer' }]);
  const name = limits.sizeName ?? 'page_size';
  if (!Number.isInteger(s) || s < 1) throw badRequest(`${name} must be a positive integer`, [{ field: name, message: 'must be a positive integer' }]);
  const size = Math.min(s, limits.maxSize);
  return { page: p, pageSize: size, offset: (p - 1) * size };
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  pageSize: number;
}
