import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Two cores: running the server-backed files in parallel mostly adds contention.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
