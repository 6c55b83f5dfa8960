// Users: system administration of accounts, the first administrator, and each user's default base.
import { hash } from '@node-rs/argon2';
import { and, asc, count, eq, ne, sql } from 'drizzle-orm';
import { baseMembers, bases, users } from '../db/schema.js';
import { writeTransaction } from '../db/connection.js';
import { badRequest, conflict, notFound } from '../errors.js';
import { newId, nowIso } from '../ids.js';
import type { BaseService } from './bases.js';
import type { Deps } from './deps.js';
import { pageArgs, type Page } from './pagination.js';
import { randomBytes } from 'node:crypto';
import { checkName } from '../checks.js';

export interface User {
  id: string;
  email: string;
  name: string;
  isAdmin: boolean;
  defaultBaseId: string | null;
  createdAt: string;
  updatedAt: string;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

export const hashPassword = (password: string) => hash(password, { algorithm: 2 /* argon2id */ });

function checkEmail(email: unknown): string {
  if (typeof email !== 'string' || !EMAIL.test(email.trim()) || email.length > 254) throw badRequest('email must be an email address', [{ field: 'email', message: 'must be an email address' }]);
  return email.trim().toLowerCase();
}
function checkPassword(password: unknown): string {
  if (typeof password !== 'string' || password.length < 8 || password.length > 256) throw badRequest('password must be 8 to 256 characters', [{ field: 'password', message: 'must be 8 to 256 characters' }]);
  return password;
}

export function createUserService({ sqlite, orm }: Deps, baseService: Pick<BaseService, 'releaseUser'>) {
  const toUser = (row: typeof users.$inferSelect): User => ({
    id: row.id, email: row.email, name: row.name, isAdmin: row.isAdmin, defaultBaseId: row.defaultBaseId,
    createdAt: row.createdAt, updatedAt: row.updatedAt,
  });

  // Prepared once: every authenticated request looks its user up.
  const byId = orm.select().from(users).where(eq(users.id, sql.placeholder('id'))).prepare();
  function findById(id: string) {
    return byId.get({ id });
  }

  function adminCountExcept(id: string) {
    return orm.select({ n: count() }).from(users).where(and(eq(users.isAdmin, true), ne(users.id, id))).get()!.n;
  }

  return {
    findById,
    findByEmail(email: string) {
      return orm.select().from(users).where(eq(users.email, email.trim().toLowerCase())).get();
    },

    async createUser(input: { email: unknown; name: unknown; password: unknown; isAdmin?: unknown }): Promise<User> {
      const email = checkEmail(input.email);
      const name = checkName(input.name, 100);
      const password = checkPassword(input.password);
      if (input.isAdmin !== undefined && input.isAdmin !== null && typeof input.isAdmin !== 'boolean') throw badRequest('is_admin must be a boolean', [{ field: 'is_admin', message: 'must be a boolean' }]);
      const passwordHash = await hashPassword(password);
      return writeTransaction(sqlite, () => {
        if (orm.select({ id: users.id }).from(users).where(eq(users.email, email)).get()) throw conflict(`A user with email ${email} already exists`);
        const now = nowIso();
        const id = newId('usr');
        const baseId = newId('bse');
        orm.insert(users).values({ id, email, name, passwordHash, isAdmin: input.isAdmin === true, defaultBaseId: baseId, createdAt: now, updatedAt: now }).run();
        orm.insert(bases).values({ id: baseId, name: 'My base', description: '', createdAt: now, updatedAt: now }).run();
        orm.insert(baseMembers).values({ baseId, userId: id, role: 'owner', createdAt: now }).run();
        return toUser(findById(id)!);
      });
    },

    async listUsers(page?: number | null, pageSize?: number | null): Promise<Page<User>> {
      const p = pageArgs(page, pageSize, { defaultSize: 20, maxSize: 1000 });
      const rows = orm.select().from(users).orderBy(asc(users.createdAt), asc(users.id)).limit(p.pageSize).offset(p.offset).all();
      const total = orm.select({ n: count() }).from(users).get()!.n;
      return { items: rows.map(toUser), total, page: p.page, pageSize: p.pageSize };
    },

    async getUser(id: string): Promise<User> {
      const row = findById(id);
      if (!row) throw notFound(`User ${id} not found`);
      return toUser(row);
    },

    async updateUser(id: string, input: { email?: unknown; name?: unknown; password?: unknown; isAdmin?: unknown }): Promise<User> {
      const changes: Partial<typeof users.$inferInsert> = {};
      if (input.email !== undefined) changes.email = checkEmail(input.email);
      if (input.name !== undefined) changes.name = checkName(input.name, 100);
      if (input.password !== undefined) changes.passwordHash = await hashPassword(checkPassword(input.password));
      if (input.isAdmin !== undefined) {
        if (typeof input.isAdmin !== 'boolean') throw badRequest('is_admin must be a boolean', [{ field: 'is_admin', message: 'must be a boolean' }]);
        changes.isAdmin = input.isAdmin;
      }
      return writeTransaction(sqlite, () => {
        const row = findById(id);
        if (!row) throw notFound(`User ${id} not found`);
        if (changes.email && changes.email !== row.email && orm.select({ id: users.id }).from(users).where(eq(users.email, changes.email)).get()) {
          throw conflict(`A user with email ${changes.email} already exists`);
        }
        if (changes.isAdmin === false && row.isAdmin && adminCountExcept(id) === 0) throw conflict('The last system administrator cannot lose that role');
        orm.update(users).set({ ...changes, updatedAt: nowIso() }).where(eq(users.id, id)).run();
        return toUser(findById(id)!);
      });
    },

    async deleteUser(id: string): Promise<{ id: string; deleted: true }> {
      return writeTransaction(sqlite, () => {
        const row = findById(id);
        if (!row) throw notFound(`User ${id} not found`);
        if (row.isAdmin && adminCountExcept(id) === 0) throw conflict('The last system administrator cannot be deleted');
        baseService.releaseUser(id);
        // Memberships go with the user (foreign key cascade).
        orm.delete(users).where(eq(users.id, id)).run();
        return { id, deleted: true as const };
      });
    },

    /** Contract section 0: with no users, create the system administrator (random password printed once). */
    async ensureFirstAdmin(email?: string, password?: string): Promise<{ email: string; password?: string } | null> {
      if (orm.select({ n: count() }).from(users).get()!.n > 0) return null;
      const generated = password ? undefined : randomBytes(12).toString('base64url');
      const admin = await this.createUser({ email: email ?? 'admin@localhost', name: 'Administrator', password: password ?? generated, isAdmin: true });
      return { email: admin.email, password: generated };
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
