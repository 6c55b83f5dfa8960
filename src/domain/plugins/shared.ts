// The error the plugin service's own argument checks answer with (contract section 7: INVALID_PARAMS).
import { AppError } from '../../errors.js';

/** A data call, proxy request or sandbox opening whose arguments do not fit (a 400). */
export const invalidParams = (message: string) => new AppError('INVALID_PARAMS', message);
