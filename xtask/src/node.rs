//! Running upstream JavaScript: installing an `@objectstack/*` package with
//! npm into a temporary folder (or using an existing install), and running
//! node scripts against it, once or as a long-lived line-based worker.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::util::{TempDir, have_program, run_output, tail};

/// Fails with a clear message when `node` cannot be started.
pub(crate) fn require_node() -> Result<()> {
    if !have_program("node") {
        bail!(
            "`node` is not installed or not on PATH: this command runs upstream JavaScript and \
             needs Node.js 18 or later (https://nodejs.org, or your package manager's `nodejs`)"
        );
    }
    Ok(())
}

/// Fails with a clear message when `npm` cannot be started.
pub(crate) fn require_npm() -> Result<()> {
    if !have_program("npm") {
        bail!(
            "`npm` is not installed or not on PATH: it comes with Node.js (https://nodejs.org); \
             or pass --upstream-dir DIR to use packages you installed yourself"
        );
    }
    Ok(())
}

/// A folder holding `node_modules/@objectstack/...`: a temporary npm
/// install (removed on drop) or one the user pointed at.
pub(crate) struct Upstream {
    dir: PathBuf,
    _temp: Option<TempDir>,
}

impl Upstream {
    /// Uses `dir` (from `--upstream-dir`) when given, else installs
    /// `package@version` with npm into a temporary folder.
    pub(crate) fn obtain(dir: Option<&Path>, package: &str, version: &str) -> Result<Upstream> {
        require_node()?;
        if let Some(dir) = dir {
            let installed = dir.join("node_modules").join(package);
            if !installed.is_dir() {
                bail!(
                    "{} does not exist: --upstream-dir must be a folder where `npm install \
                     {package}` has been run",
                    installed.display()
                );
            }
            return Ok(Upstream {
                dir: dir.to_path_buf(),
                _temp: None,
            });
        }
        require_npm()?;
        let temp = TempDir::new("npm")?;
        std::fs::write(
            temp.path().join("package.json"),
            "{\"name\":\"xtask-upstream\",\"private\":true}\n",
        )
        .context("could not prepare the npm folder")?;
        let spec = format!("{package}@{version}");
        eprintln!("installing {spec} with npm into {}", temp.path().display());
        let mut cmd = Command::new("npm");
        cmd.current_dir(temp.path()).args([
            "install",
            "--no-audit",
            "--no-fund",
            "--ignore-scripts",
            "--loglevel=error",
            &spec,
        ]);
        if let Err(err) = run_output(&mut cmd) {
            bail!(
                "could not install {spec} from the npm registry: {err:#}\ncheck that the \
                 version exists (`npm view {package} versions`) and that the registry is \
                 reachable, or pass --upstream-dir DIR with an existing install"
            );
        }
        Ok(Upstream {
            dir: temp.path().to_path_buf(),
            _temp: Some(temp),
        })
    }

    /// The installed version of `package` (from its `package.json`).
    pub(crate) fn version_of(&self, package: &str) -> Result<String> {
        let path = self
            .dir
            .join("node_modules")
            .join(package)
            .join("package.json");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("could not read {}", path.display()))?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .with_context(|| format!("{} is not JSON", path.display()))?;
        Ok(json
            .get("version")
            .and_then(serde_json::Value::as_str)
            .unwrap_or("unknown")
            .to_owned())
    }

    /// Runs a CommonJS `script` with node in the upstream folder and
    /// returns its stdout.
    pub(crate) fn run_script(&self, script: &str) -> Result<String> {
        let mut cmd = Command::new("node");
        cmd.current_dir(&self.dir).args(["-e", script]);
        run_output(&mut cmd)
    }

    /// Starts a long-lived node `script` that answers one line of stdout
    /// for each line of stdin.
    pub(crate) fn worker(&self, script: &str) -> Result<Worker> {
        let mut child = Command::new("node")
            .current_dir(&self.dir)
            .args(["-e", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("could not start node")?;
        let stdin = child.stdin.take().context("node has no stdin")?;
        let stdout = child.stdout.take().context("node has no stdout")?;
        Ok(Worker {
            child,
            stdin: BufWriter::new(stdin),
            stdout: BufReader::new(stdout),
        })
    }
}

/// A node process answering one line per request line.
pub(crate) struct Worker {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Worker {
    /// Sends one line (it must not contain a newline) and reads the answer.
    pub(crate) fn ask(&mut self, line: &str) -> Result<String> {
        let sent = self
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.write_all(b"\n"))
            .and_then(|()| self.stdin.flush());
        let mut answer = String::new();
        let read = match sent {
            Ok(()) => self.stdout.read_line(&mut answer),
            Err(e) => Err(e),
        };
        match read {
            Ok(n) if n > 0 => Ok(answer.trim_end().to_owned()),
            _ => bail!("the node worker stopped: {}", self.stderr_tail()),
        }
    }

    fn stderr_tail(&mut self) -> String {
        let _ = self.child.kill();
        let mut text = String::new();
        if let Some(mut err) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut err, &mut text);
        }
        tail(&text, 20)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
