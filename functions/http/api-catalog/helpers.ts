import type { z } from 'zod';
import type { ApiResponse } from '../../core/openapi/api-document.js';

/** Short forms of the answers the catalog describes. */
export const json = (description: string, schema?: z.ZodType): ApiResponse => ({ description, ...(schema ? { schema } : {}) });
export const created = (description: string, schema?: z.ZodType): ApiResponse => ({ status: 201, description, ...(schema ? { schema } : {}) });
export const createdText = (description: string): ApiResponse => ({ status: 201, type: 'text', description });
export const text = (description: string): ApiResponse => ({ type: 'text', description });
export const sse = (description: string): ApiResponse => ({ type: 'sse', description });

/** Paths under a workspace. */
export const ws = (path: string) => `/api/w/:workspace${path}`;
