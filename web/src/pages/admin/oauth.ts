// OAuth application types, the six scopes with their meaning, and the GraphQL selection the application pages share.
export interface OAuthApp {
  id: string;
  appName: string;
  clientId: string;
  callbackUrl: string;
  allowedBases: string[];
  scopes: string[];
  isActive: boolean;
  rateLimitPerMinute: number;
  writeRateLimitPerMinute: number;
  createdAt: string;
  updatedAt: string;
}

export const APP_FIELDS = 'id appName clientId callbackUrl allowedBases scopes isActive rateLimitPerMinute writeRateLimitPerMinute createdAt updatedAt';

export const SCOPES: Array<{ name: string; label: string }> = [
  { name: 'base:read', label: 'Read the allowed bases and their details' },
  { name: 'table:read', label: 'Read table structure' },
  { name: 'field:read', label: 'Read field definitions' },
  { name: 'record:read', label: 'Read, query and search records' },
  { name: 'record:write', label: 'Create, update and delete records' },
  { name: 'table:write', label: 'Write table structure (reserved: no endpoint yet)' },
];

export const DEFAULT_RATE_LIMIT = 600;
export const DEFAULT_WRITE_RATE_LIMIT = 300;

/** Audit actions the service records, for the filter. */
export const AUDIT_ACTIONS = ['app.create', 'app.update', 'app.delete', 'secret.reset', 'token.revoke', 'record.create', 'record.update', 'record.delete'];

export interface AppFormValue {
  appName: string;
  callbackUrl: string;
  scopes: string[];
  allowedBases: string[];
  rateLimitPerMinute: number | string;
  writeRateLimitPerMinute: number | string;
}

/** The AppInput of a form: limits as integers when they are written as such (the server names a bad one). */
export function appInput(v: AppFormValue): Record<string, unknown> {
  const num = (x: number | string) => (typeof x === 'number' ? x : /^\s*\d+\s*$/.test(x) ? Number(x) : x);
  return {
    appName: v.appName.trim(), callbackUrl: v.callbackUrl.trim(), scopes: v.scopes, allowedBases: v.allowedBases,
    rateLimitPerMinute: num(v.rateLimitPerMinute), writeRateLimitPerMinute: num(v.writeRateLimitPerMinute),
  };
}
