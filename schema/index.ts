// Assembles the schema: importing each concept's file registers its types and operations.
import { builder } from './builder.js';
import './types/common.js';
import './types/user.js';
import './types/base.js';
import './types/table.js';
import './types/field.js';
import './types/record.js';
import './types/workflow.js';
import './types/oauth.js';
import './types/plugin.js';
import './types/open-api.js';
import './types/event.js';
import './types/webhook.js';
import './types/job.js';
import './types/view.js';
import './types/trash.js';
import './types/attachment.js';

export const schema = builder.toSchema({ sortSchema: true });
