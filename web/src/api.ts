// The web app's one door to the server: GraphQL over fetch with the user's token, and errors with the server's code and message.
import { reactive } from 'vue';

const TOKEN_KEY = 'table-service.token';

export interface CurrentUser {
  id: string;
  email: string;
  name: string;
  isAdmin: boolean;
  defaultBaseId: string | null;
}

/** Signed-in state shared by every page. */
export const session = reactive<{ token: string | null; user: CurrentUser | null }>({
  token: localStorage.getItem(TOKEN_KEY),
  user: null,
});

export class ApiError extends Error {
  constructor(message: string, readonly code: string, readonly status: number, readonly details?: Array<{ index?: number; field?: string; path?: string; message: string }>) {
    super(message);
  }
}

/** Runs a GraphQL operation; throws ApiError with the server's code (UNAUTHORIZED signs out). */
export async function gql<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await fetch('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(session.token ? { authorization: `Bearer ${session.token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  let body: any;
  try {
    body = await res.json();
  } catch {
    throw new ApiError(`The server answered ${res.status}`, 'INTERNAL_ERROR', res.status);
  }
  if (body.errors?.length) {
    const e = body.errors[0];
    const code = e.extensions?.code ?? 'BAD_REQUEST';
    if (code === 'UNAUTHORIZED' && session.token) signOut();
    throw new ApiError(e.message, code, e.extensions?.http?.status ?? res.status, e.extensions?.details);
  }
  return body.data as T;
}

/** Calls a REST endpoint of the v1 family (plugin uploads and the plugin host use them); throws ApiError. */
export async function rest<T = any>(method: string, path: string, body?: BodyInit | Record<string, unknown>): Promise<T> {
  const headers: Record<string, string> = session.token ? { authorization: `Bearer ${session.token}` } : {};
  let payload: BodyInit | undefined;
  if (body instanceof FormData || body instanceof Blob) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(path, { method, headers, body: payload });
  const json = await res.json().catch(() => null);
  if (!res.ok || !json || json.code !== 0) {
    throw new ApiError(json?.msg ?? `The server answered ${res.status}`, json?.error ?? 'INTERNAL_ERROR', res.status, json?.details);
  }
  return json.data as T;
}

export async function signIn(email: string, password: string) {
  const data = await gql<{ login: { token: string; user: CurrentUser } }>(
    'mutation Login($email: String!, $password: String!) { login(email: $email, password: $password) { token user { id email name isAdmin defaultBaseId } } }',
    { email, password },
  );
  session.token = data.login.token;
  session.user = data.login.user;
  localStorage.setItem(TOKEN_KEY, data.login.token);
}

export async function loadMe() {
  if (!session.token) return null;
  try {
    session.user = (await gql<{ me: CurrentUser }>('{ me { id email name isAdmin defaultBaseId } }')).me;
  } catch {
    signOut();
  }
  return session.user;
}

export function signOut() {
  const token = session.token;
  session.token = null;
  session.user = null;
  localStorage.removeItem(TOKEN_KEY);
  if (token) fetch('/api/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${token}` } }).catch(() => {});
}
