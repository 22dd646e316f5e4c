import { z } from 'zod';

/**
 * The shape of `svc.yaml` (spec 2.9), strict at every level: a key the spec does not list is an
 * error naming it. The JSON Schema published for editors (schemas/svc.yaml.schema.json) is
 * generated from these same objects (see json-schema.ts).
 */

const globs = z.array(z.string()).describe('glob patterns (picomatch) over paths relative to the svc.yaml directory');

const specificItems = z
  .strictObject({
    variables: z.array(z.string()).optional().describe('variable path patterns stored per workspace'),
    resources: z.array(z.string()).optional().describe('resource path patterns stored per workspace'),
    triggers: z.array(z.string()).optional().describe('trigger path patterns stored per workspace'),
    folders: z.array(z.string()).optional().describe('folder name patterns stored per workspace'),
    settings: z.boolean().optional().describe('store the workspace settings per workspace'),
  })
  .describe('items stored on disk as <file>.<workspaceName>.<type>.yaml');
export type SpecificItems = z.infer<typeof specificItems>;

/** Every option a workspace entry's `overrides` / `promotionOverrides` may replace. */
export const syncOptionShape = {
  defaultTs: z.enum(['bun', 'deno']).optional().describe('default TypeScript runtime for new scripts (bun or deno)'),
  includes: globs.optional().describe('glob patterns included in sync (default: everything)'),
  extraIncludes: globs.optional().describe('extra globs merged with includes'),
  excludes: globs.optional().describe('glob patterns excluded from sync'),
  skipVariables: z.boolean().optional(),
  skipResources: z.boolean().optional(),
  skipResourceTypes: z.boolean().optional(),
  skipSecrets: z.boolean().optional().describe('skip secret variables (default true)'),
  skipScripts: z.boolean().optional(),
  skipFlows: z.boolean().optional(),
  skipApps: z.boolean().optional(),
  skipFolders: z.boolean().optional(),
  skipWorkspaceDependencies: z.boolean().optional(),
  skipDmn: z.boolean().optional(),
  skipDataMigrations: z.boolean().optional(),
  includeSchedules: z.boolean().optional(),
  includeTriggers: z.boolean().optional(),
  includeUsers: z.boolean().optional(),
  includeGroups: z.boolean().optional(),
  includeSettings: z.boolean().optional(),
  includeKey: z.boolean().optional().describe('include the workspace encryption key of pulled secrets'),
  parallel: z.number().int().min(1).max(100).optional().describe('number of parallel operations during sync'),
  locksRequired: z.boolean().optional().describe('push fails when a script has no lock file'),
  lint: z.boolean().optional().describe('validate every file before push; push nothing if one fails'),
  plainSecrets: z.boolean().optional().describe('write pulled secrets as plain text (not recommended)'),
  message: z.string().optional().describe('default deployment message recorded on pushed versions'),
  promotion: z.string().optional().describe('git branch whose promotionOverrides are used'),
  skipBranchValidation: z.boolean().optional(),
  nonDottedPaths: z.boolean().optional().describe('use __flow / __app / __raw_app instead of .flow / .app / .raw_app'),
  syncBehavior: z.literal('v1').optional().describe('v1: keep ownership on update, strip ownership fields on pull'),
};

export const syncOptions = z.strictObject(syncOptionShape);
export type SyncOptions = z.infer<typeof syncOptions>;

const codebase = z.strictObject({
  relative_path: z.string().min(1).describe('path to the codebase directory'),
  includes: globs.optional(),
  excludes: globs.optional(),
  format: z.enum(['cjs', 'esm']).optional(),
  external: z.array(z.string()).optional().describe('dependencies left unbundled'),
  assets: z.array(z.strictObject({ from: z.string(), to: z.string() })).optional().describe('static files copied beside the bundle'),
  customBundler: z.string().optional().describe('path to a custom bundler script'),
  inject: z.array(z.string()).optional(),
  define: z.record(z.string(), z.string()).optional(),
  banner: z.record(z.string(), z.string()).optional(),
  loader: z.record(z.string(), z.string()).optional(),
});
export type Codebase = z.infer<typeof codebase>;

const workspaceEntry = z.strictObject({
  gitBranch: z.string().optional().describe('defaults to the workspace name'),
  workspaceId: z.string().optional().describe('defaults to the workspace name'),
  baseUrl: z.string().optional().describe('instance URL for this workspace'),
  overrides: syncOptions.partial().optional().describe('replaces any top-level sync option'),
  promotionOverrides: syncOptions.partial().optional().describe('applied with the promotion flag'),
  specificItems: specificItems.optional(),
});
export type WorkspaceEntry = z.infer<typeof workspaceEntry>;

/**
 * `commonSpecificItems` is the one reserved key; every other key names a workspace. A plain record
 * with a refinement would report errors at the map, not at the entry, so the shape is checked key
 * by key: `catchall` validates every entry strictly and its issues carry the entry's key.
 */
const workspaceMap = z
  .object({ commonSpecificItems: specificItems.optional() })
  .catchall(workspaceEntry)
  .describe('workspace name -> settings; commonSpecificItems applies to all');
export type WorkspaceMap = z.infer<typeof workspaceMap>;

export const svcYaml = z.strictObject({
  ...syncOptionShape,
  codebases: z.array(codebase).optional(),
  workspaces: workspaceMap.optional(),
  gitBranches: workspaceMap.optional().describe('deprecated: use workspaces'),
  environments: workspaceMap.optional().describe('deprecated: use workspaces'),
});
export type SvcYaml = z.infer<typeof svcYaml>;
