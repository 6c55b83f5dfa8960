// last_modified_time: when the record was last changed (its creation time until then); read-only.
import { systemTime } from './system-time.js';

export const lastModifiedTime = systemTime('last_modified_time', '_updated_at');
