// The service's version, read from package.json (plugins check their engines.table range against it).
import { createRequire } from 'node:module';

export const version: string = createRequire(import.meta.url)('../package.json').version;
