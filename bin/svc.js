#!/usr/bin/env node
// Runs the TypeScript entry point through tsx, so `npx svc` works without a build step.
import { register } from 'tsx/esm/api';

register();
await import('./svc.ts');
