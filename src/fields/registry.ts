// The registry of field types; `satisfies` makes a missing type a compile error.
import type { FieldDef, FieldType, FieldTypeName } from './field-type.js';
import { count, formula, lookup, rollup } from './types/computed.js';
import { attachment } from './types/attachment.js';
import { autonumber } from './types/autonumber.js';
import { checkbox } from './types/checkbox.js';
import { createdTime } from './types/created-time.js';
import { date } from './types/date.js';
import { email } from './types/email.js';
import { lastModifiedTime } from './types/last-modified-time.js';
import { link } from './types/link.js';
import { longText } from './types/long-text.js';
import { multiSelect } from './types/multi-select.js';
import { number } from './types/number.js';
import { phone } from './types/phone.js';
import { rating } from './types/rating.js';
import { singleSelect } from './types/single-select.js';
import { text } from './types/text.js';
import { url } from './types/url.js';
import { user } from './types/user.js';

export const FIELD_TYPES = {
  text, long_text: longText, number, date, single_select: singleSelect, multi_select: multiSelect, checkbox,
  user, link, email, url, phone, rating, created_time: createdTime, last_modified_time: lastModifiedTime, autonumber,
  formula, lookup, rollup, count, attachment,
} satisfies Record<FieldTypeName, FieldType>;

export function fieldType(name: FieldTypeName): FieldType {
  return FIELD_TYPES[name];
}

/** The behaviour of one field's values: its type's, or for a computed field the type of its result. */
export function typeOfField(field: Pick<FieldDef, 'type' | 'config'> & Partial<FieldDef>): FieldType {
  const type = FIELD_TYPES[field.type];
  return type.valuesAs ? type.valuesAs(field as FieldDef) : type;
}

export function isFieldTypeName(name: unknown): name is FieldTypeName {
  return typeof name === 'string' && Object.hasOwn(FIELD_TYPES, name);
}
