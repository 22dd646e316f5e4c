import packageJson from '../package.json' with { type: 'json' };

/** The service's version, as both shells report it at GET /api/version. */
export const VERSION: string = packageJson.version;
