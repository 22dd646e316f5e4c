import type { ApiOperation } from '../../core/openapi/api-document.js';
import { identityOperations } from './identity.js';
import { itemOperations } from './items.js';
import { jobOperations } from './jobs.js';

/**
 * Every operation of svc's API under /api/, for GET /api/openapi.json and its reference page. A
 * test (test/unit/in-process/api-openapi.test.ts) compares this with the routes the app registers.
 */
export const API_OPERATIONS: readonly ApiOperation[] = [...identityOperations, ...itemOperations, ...jobOperations];
