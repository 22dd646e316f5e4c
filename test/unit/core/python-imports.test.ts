import { describe, expect, it } from 'vitest';
import { pythonLockRequirements, pythonRequirements, PythonRequirementError, readPythonLock } from '../../../functions/core/dependencies/python-imports.js';

describe('distributions of a Python script', () => {
  it('maps imports to distributions and leaves out the standard library, svc and workspace imports', () => {
    const content = `import os, sys, json as j
import yaml
from PIL import Image
from bs4 import BeautifulSoup
import psycopg2.extras
from svc import get_variable
from f.common.db import connect
from .local import thing
import my_pkg.sub  # a comment
`;
    expect(pythonRequirements(content)).toEqual({ pyyaml: 'PyYAML', pillow: 'pillow', beautifulsoup4: 'beautifulsoup4', 'psycopg2-binary': 'psycopg2-binary', 'my-pkg': 'my-pkg' });
  });

  it('takes pins and additions from the # requirements: block, and refuses what pip could not read', () => {
    const content = '# requirements:\n# PyYAML==5.4.1\n# requests[socks] >= 2.31, <3\n\nimport yaml\n';
    expect(pythonRequirements(content)).toEqual({ pyyaml: 'PyYAML==5.4.1', requests: 'requests[socks]>=2.31,<3' });
    expect(() => pythonRequirements('# requirements:\n# git+https://example.com/x.git\n')).toThrow(PythonRequirementError);
    expect(() => pythonRequirements('# requirements:\n# -e /etc\n')).toThrow(PythonRequirementError);
  });

  it("takes Windmill's # extra_requirements: block as the # requirements: one, each block ending at the next", () => {
    expect(pythonRequirements('# extra_requirements:\n# PyYAML==5.4.1\n\nimport yaml\n')).toEqual({ pyyaml: 'PyYAML==5.4.1' });
    expect(pythonRequirements('# requirements:\n# requests\n# extra_requirements:\n# PyYAML==5.4.1\n')).toEqual({ requests: 'requests', pyyaml: 'PyYAML==5.4.1' });
  });

  it('maps no private module to a distribution: pip would read `-x` as an option', () => {
    expect(pythonRequirements('import __index_url, _r\nfrom __help import x\nimport yaml_\nimport yaml\n')).toEqual({ pyyaml: 'PyYAML' });
  });

  it("reads svc's hash-pinned lock and nothing else", () => {
    const sha = 'a'.repeat(64);
    expect(readPythonLock(`PyYAML==6.0.0 --hash=sha256:${sha}\n`)).toEqual([{ name: 'PyYAML', version: '6.0.0', sha256: sha }]);
    expect(readPythonLock('requests==2.32.0\n')).toBeNull();
    expect(readPythonLock('')).toBeNull();
  });

  it('refuses a lock whose text pip would split into more lines than it reads (a comment hiding a requirement or an option)', () => {
    const line = `PyYAML==6.0.0 --hash=sha256:${'a'.repeat(64)}`;
    expect(readPythonLock(`# made by svc\r\n${line}\r\n`)).toEqual([{ name: 'PyYAML', version: '6.0.0', sha256: 'a'.repeat(64) }]);
    for (const brk of ['\r', '\v', '\f', '\x1c', '\x1d', '\x1e', '\x85', '\u2028', '\u2029']) {
      const hidden = `${line}\n# note${brk}-r http://169.254.169.254/latest/meta-data/\n`;
      // What Python's str.splitlines (pip) sees: a line the lock reader must not have skipped.
      expect(hidden.split(/\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/)).toContain('-r http://169.254.169.254/latest/meta-data/');
      expect(readPythonLock(hidden)).toBeNull();
    }
  });

  it('gives pip the locked lines alone', () => {
    const sha = 'b'.repeat(64);
    const locked = readPythonLock(`# -*- coding: utf-7 -*-\nPyYAML==6.0.0+AAo- --hash=sha256:${sha}\n`)!;
    expect(pythonLockRequirements(locked)).toBe(`PyYAML==6.0.0+AAo- --hash=sha256:${sha}\n`);
  });
});
