// created_time: when the record was created; read-only.
import { systemTime } from './system-time.js';

export const createdTime = systemTime('created_time', '_created_at');
