//! What a hook's containers do, read for idempotency: their commands and
//! `sh -c` scripts, the SQL they feed to `psql`/`mysql` (inline, here-docs,
//! files and env vars from ConfigMaps of the same app), and whether a
//! versioned migration tool does the work.

use std::collections::BTreeSet;

use serde_json::Value;

use super::podspec::{self, EnvSource, MountedFile};
use super::shell::{self, Command};
use super::sql;
use crate::manifest::Manifest;

/// One piece of work that fails or repeats itself on a second run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Unsafe {
    /// Where: ``line 3 of key `init.sql` in ConfigMap `db-init` ``.
    pub(crate) place: String,
    /// The statement or command, abbreviated.
    pub(crate) statement: String,
    /// Why a second run fails or duplicates.
    pub(crate) why: String,
}

/// The result of reading a hook's containers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct HookWork {
    /// A versioned migration tool found in a command or image (the hook is
    /// then idempotent by construction).
    pub(crate) migration_tool: Option<String>,
    /// Work that is not safe to run twice.
    pub(crate) problems: Vec<Unsafe>,
}

/// Reads the containers of `hook`, resolving ConfigMaps among `resources`.
#[must_use]
pub(crate) fn analyze(hook: &Manifest, resources: &[Manifest]) -> HookWork {
    let mut w = Walker {
        hook,
        resources,
        out: HookWork::default(),
        seen_files: BTreeSet::new(),
    };
    let Some(spec) = podspec::pod_spec(hook) else {
        return w.out;
    };
    for c in podspec::containers(spec) {
        let name = c.get("name").and_then(Value::as_str).unwrap_or("?");
        if let Some(tool) = c
            .get("image")
            .and_then(Value::as_str)
            .and_then(migration_image)
        {
            w.out.migration_tool.get_or_insert_with(|| tool.to_string());
        }
        let argv: Vec<String> = podspec::argv(c)
            .into_iter()
            .map(|a| expand_env(&a, c, &w))
            .collect();
        if argv.is_empty() {
            continue;
        }
        let cx = Cx {
            spec,
            container: c,
            name,
        };
        let top = format!("the command of container `{name}`");
        let place = |_: u32| top.clone();
        let cmd = Command {
            text: argv.join(" "),
            argv,
            line: 1,
            heredoc: None,
            stdin_file: None,
            tolerated: false,
        };
        let mut sql_client = false;
        w.command(&cx, &cmd, &place, 0, &mut sql_client);
        if sql_client {
            // A client fed by a loop or glob: read every mounted `.sql` key.
            for (cm, _) in podspec::mounted_config_maps(spec, c) {
                let Some(data) = w
                    .config_map(&cm)
                    .and_then(|v| v.get("data"))
                    .and_then(Value::as_object)
                else {
                    continue;
                };
                let keys: Vec<(String, String)> = data
                    .iter()
                    .filter(|(k, _)| k.ends_with(".sql"))
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect();
                for (k, text) in keys {
                    w.sql_file(&cm, &k, &text);
                }
            }
        }
    }
    if w.out.migration_tool.is_some() {
        w.out.problems.clear();
    }
    w.out
}

struct Cx<'v> {
    spec: &'v Value,
    container: &'v Value,
    name: &'v str,
}

struct Walker<'a> {
    hook: &'a Manifest,
    resources: &'a [Manifest],
    out: HookWork,
    seen_files: BTreeSet<(String, String)>,
}

impl Walker<'_> {
    fn config_map(&self, name: &str) -> Option<&Value> {
        self.resources
            .iter()
            .find(|m| {
                m.id.kind == "ConfigMap"
                    && m.id.group.is_empty()
                    && m.id.name == name
                    && m.id.namespace == self.hook.id.namespace
            })
            .map(|m| &**m.value)
    }

    fn file_text(&self, f: &MountedFile) -> Option<String> {
        self.config_map(&f.config_map)?
            .get("data")?
            .get(&f.key)?
            .as_str()
            .map(str::to_string)
    }

    fn mounted(&self, cx: &Cx<'_>, path: &str) -> Option<(MountedFile, String)> {
        let f = podspec::mounted_config_map_file(cx.spec, cx.container, path)?;
        let text = self.file_text(&f)?;
        Some((f, text))
    }

    fn script(
        &mut self,
        cx: &Cx<'_>,
        text: &str,
        place: &dyn Fn(u32) -> String,
        depth: u8,
        sql_client: &mut bool,
    ) {
        for cmd in shell::parse_script(text) {
            self.command(cx, &cmd, place, depth, sql_client);
        }
    }

    fn sql_file(&mut self, cm: &str, key: &str, text: &str) {
        if !self.seen_files.insert((cm.to_string(), key.to_string())) {
            return;
        }
        for p in sql::non_idempotent(text) {
            self.out.problems.push(Unsafe {
                place: format!("line {} of `{key}` in ConfigMap `{cm}`", p.line),
                statement: p.statement,
                why: p.why,
            });
        }
    }

    /// SQL whose line 1 is script line `first_line`.
    fn sql_text(&mut self, text: &str, place: &dyn Fn(u32) -> String, first_line: u32) {
        for p in sql::non_idempotent(text) {
            self.out.problems.push(Unsafe {
                place: place(first_line + p.line - 1),
                statement: p.statement,
                why: p.why,
            });
        }
    }

    fn command(
        &mut self,
        cx: &Cx<'_>,
        cmd: &Command,
        place: &dyn Fn(u32) -> String,
        depth: u8,
        sql_client: &mut bool,
    ) {
        if depth > 3 || cmd.argv.is_empty() {
            return;
        }
        let argv = &cmd.argv;
        if let Some(tool) = migration_tool(argv) {
            self.out
                .migration_tool
                .get_or_insert_with(|| tool.to_string());
            return;
        }
        if let Some(script) = shell::inline_script(argv) {
            let line0 = cmd.line;
            let container = cx.name;
            let nested = |l: u32| place(line0 + l - 1);
            let top = |l: u32| format!("line {l} of the script of container `{container}`");
            let inner: &dyn Fn(u32) -> String = if depth > 0 { &nested } else { &top };
            self.script(cx, script, inner, depth + 1, sql_client);
            return;
        }
        let file = shell::script_file(argv).or_else(|| {
            argv.first()
                .filter(|p| p.starts_with('/') || p.starts_with("./"))
                .map(String::as_str)
        });
        if let Some(path) = file {
            if let Some((f, text)) = self.mounted(cx, path) {
                if self
                    .seen_files
                    .insert((f.config_map.clone(), f.key.clone()))
                {
                    let (cm, key) = (f.config_map.clone(), f.key.clone());
                    self.script(
                        cx,
                        &text,
                        &|l| format!("line {l} of `{key}` in ConfigMap `{cm}`"),
                        depth + 1,
                        sql_client,
                    );
                }
                return;
            }
        }
        if cmd.tolerated {
            return;
        }
        let prog = cmd.program().to_string();
        let args: Vec<&str> = argv.iter().skip(1).map(String::as_str).collect();
        match prog.as_str() {
            "psql" | "mysql" | "mariadb" | "cockroach" => {
                // `fed`: the SQL it runs was found; otherwise it reads a file
                // named by a loop variable or glob, and the caller reads every mounted `.sql`.
                let mut fed = false;
                let (inline_flags, file_flags): (&[&str], &[&str]) = if prog == "psql" {
                    (&["-c", "--command"], &["-f", "--file"])
                } else if prog == "cockroach" {
                    (&["-e", "--execute"], &["-f", "--file"])
                } else {
                    (&["-e", "--execute"], &[])
                };
                for (flag, value) in flag_values(&args) {
                    if inline_flags.contains(&flag) {
                        fed = true;
                        self.sql_text(value, place, cmd.line);
                    } else if file_flags.contains(&flag) {
                        if let Some((f, text)) = self.mounted(cx, value) {
                            fed = true;
                            self.sql_file(&f.config_map, &f.key, &text);
                        }
                    }
                }
                if let Some(body) = &cmd.heredoc {
                    fed = true;
                    // The body starts on the line after the command.
                    self.sql_text(body, place, cmd.line + 1);
                }
                if let Some(path) = &cmd.stdin_file {
                    if let Some((f, text)) = self.mounted(cx, path) {
                        fed = true;
                        self.sql_file(&f.config_map, &f.key, &text);
                    }
                }
                *sql_client |= !fed;
            }
            "kubectl" | "oc" => {
                let sub = args.iter().find(|a| !a.starts_with('-'));
                if sub == Some(&"create") && !args.iter().any(|a| a.starts_with("--dry-run")) {
                    self.shell(place, cmd, "fails when the object already exists");
                }
            }
            "mkdir" => {
                let parents = args.iter().any(|a| {
                    *a == "--parents"
                        || (a.starts_with('-') && !a.starts_with("--") && a.contains('p'))
                });
                if !parents {
                    self.shell(place, cmd, "fails when the directory already exists");
                }
            }
            "helm" if args.iter().find(|a| !a.starts_with('-')) == Some(&"install") => {
                self.shell(place, cmd, "fails when the release already exists");
            }
            "curl" => {
                let post = args.windows(2).any(|w| {
                    (w[0] == "-X" || w[0] == "--request") && w[1].eq_ignore_ascii_case("POST")
                }) || args.iter().any(|a| {
                    a.eq_ignore_ascii_case("-XPOST") || a.eq_ignore_ascii_case("--request=POST")
                });
                if post {
                    self.shell(
                        place,
                        cmd,
                        "sends the request again, and a POST usually creates something each time",
                    );
                }
            }
            "createdb" | "createuser" => {
                self.shell(place, cmd, "fails when it already exists");
            }
            _ => {}
        }
    }

    fn shell(&mut self, place: &dyn Fn(u32) -> String, cmd: &Command, why: &str) {
        let text: String = if cmd.text.is_empty() {
            cmd.argv.join(" ")
        } else {
            cmd.text.clone()
        };
        let statement = if text.chars().count() > 60 {
            format!("{}…", text.chars().take(59).collect::<String>())
        } else {
            text
        };
        self.out.problems.push(Unsafe {
            place: place(cmd.line),
            statement,
            why: why.to_string(),
        });
    }
}

/// `-c X`, `-cX`, `--command=X`, `--command X` pairs.
fn flag_values<'a>(args: &[&'a str]) -> Vec<(&'a str, &'a str)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if let Some((f, v)) = a.split_once('=').filter(|_| a.starts_with("--")) {
            out.push((f, v));
        } else if a.starts_with("--") || (a.starts_with('-') && a.len() == 2) {
            if let Some(v) = args.get(i + 1) {
                out.push((a, v));
                i += 1;
            }
        } else if a.starts_with('-') && a.len() > 2 && a.is_char_boundary(2) {
            out.push((&a[..2], &a[2..]));
        }
        i += 1;
    }
    out
}

/// Replaces an argument that is exactly `$VAR` or `${VAR}` with the env
/// var's value from the manifest or its ConfigMap.
fn expand_env(arg: &str, container: &Value, w: &Walker<'_>) -> String {
    let name = arg
        .strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .or_else(|| arg.strip_prefix('$'))
        .filter(|n| !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_'));
    let Some(name) = name else {
        return arg.to_string();
    };
    match podspec::env_source(container, name) {
        Some(EnvSource::Literal(v)) => v,
        Some(EnvSource::ConfigMapKey(f)) => w.file_text(&f).unwrap_or_else(|| arg.to_string()),
        None => arg.to_string(),
    }
}

/// Runner prefixes that start another program (`npx prisma`, `bundle exec rake`).
fn strip_runner(argv: &[String]) -> &[String] {
    let prog = argv.first().map(|p| p.rsplit('/').next().unwrap_or(p));
    match prog {
        Some("npx" | "bunx" | "pnpx") => {
            let rest = &argv[1..];
            let skip = rest.iter().take_while(|a| a.starts_with('-')).count();
            strip_runner(&rest[skip..])
        }
        Some("yarn" | "pnpm" | "npm") => {
            let rest = &argv[1..];
            match rest.first().map(String::as_str) {
                Some("exec" | "run" | "dlx") => strip_runner(&rest[1..]),
                _ => strip_runner(rest),
            }
        }
        Some("bundle" | "poetry" | "pipenv" | "uv") => match argv.get(1).map(String::as_str) {
            Some("exec" | "run") => strip_runner(&argv[2..]),
            _ => argv,
        },
        _ => argv,
    }
}

/// The versioned migration tool `argv` runs, if any.
#[must_use]
pub(crate) fn migration_tool(argv: &[String]) -> Option<&'static str> {
    let a = strip_runner(argv);
    let prog = a.first()?.rsplit('/').next()?;
    let rest = &a[1..];
    let has = |w: &str| rest.iter().any(|x| x == w);
    let any = |f: &dyn Fn(&str) -> bool| rest.iter().any(|x| f(x));
    if any(&|x| x.contains("Release.migrate")) {
        return Some("ecto");
    }
    Some(match prog {
        "flyway" => "flyway",
        "liquibase" => "liquibase",
        "goose" => "goose",
        "dbmate" => "dbmate",
        "atlas" => "atlas",
        "sqitch" => "sqitch",
        "alembic" => "alembic",
        "knex" => "knex",
        "sequelize" | "sequelize-cli" => "sequelize",
        "diesel" => "diesel",
        "sqlx" => "sqlx",
        "refinery" => "refinery",
        "typeorm" | "typeorm-ts-node-commonjs" | "typeorm-ts-node-esm" => "typeorm",
        "migrate" => "golang-migrate",
        "prisma" if has("migrate") => "prisma",
        "rails" | "rake" if any(&|x| x.starts_with("db:migrate") || x == "db:prepare") => "rails",
        "mix" if has("ecto.migrate") => "ecto",
        "php" if any(&|x| x.ends_with("artisan")) && any(&|x| x.starts_with("migrate")) => {
            "laravel"
        }
        "artisan" if any(&|x| x.starts_with("migrate")) => "laravel",
        "django-admin" if has("migrate") => "django",
        p if p.starts_with("python") => {
            if has("migrate") && any(&|x| x.ends_with("manage.py")) {
                "django"
            } else if rest.first().is_some_and(|x| x == "-m")
                && rest.get(1).is_some_and(|x| x == "alembic")
            {
                "alembic"
            } else {
                return None;
            }
        }
        "manage.py" if has("migrate") => "django",
        _ => return None,
    })
}

/// The migration tool an image packages (its entrypoint runs it).
#[must_use]
pub(crate) fn migration_image(image: &str) -> Option<&'static str> {
    let no_tag = image.split('@').next().unwrap_or(image);
    let path = match no_tag.rsplit_once(':') {
        Some((p, t)) if !t.contains('/') => p,
        _ => no_tag,
    };
    let last = path.rsplit('/').next().unwrap_or(path);
    Some(match last {
        "flyway" => "flyway",
        "liquibase" => "liquibase",
        "dbmate" => "dbmate",
        "atlas" => "atlas",
        "sqitch" => "sqitch",
        "goose" => "goose",
        "migrate" if path.ends_with("migrate/migrate") => "golang-migrate",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{manifest_from_value, Origin, Scopes};
    use serde_json::json;

    fn job(command: Value, args: Value) -> Manifest {
        let v = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"template": {"spec": {
                "containers": [{"name": "c", "image": "postgres:16", "command": command, "args": args,
                    "env": [{"name": "INIT_SQL", "valueFrom": {"configMapKeyRef": {"name": "sql", "key": "init.sql"}}}],
                    "volumeMounts": [{"name": "s", "mountPath": "/scripts"}]}],
                "volumes": [{"name": "s", "configMap": {"name": "scripts"}}]}}}});
        manifest_from_value(v, Origin::default(), "ns", &Scopes::default()).expect("valid")
    }

    fn resources() -> Vec<Manifest> {
        let cms = [
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sql"},
                "data": {"init.sql": "CREATE TABLE t (id int);"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "scripts"},
                "data": {"run.sh": "#!/bin/sh\nset -e\nmkdir /data/x\npsql -f /scripts/seed.sql\n",
                         "seed.sql": "INSERT INTO t VALUES (1);\n"}}),
        ];
        cms.into_iter()
            .map(|v| {
                manifest_from_value(v, Origin::default(), "ns", &Scopes::default()).expect("valid")
            })
            .collect()
    }

    /// (command, args, expected statements flagged, migration tool)
    #[allow(clippy::type_complexity)]
    fn table() -> Vec<(Value, Value, Vec<&'static str>, Option<&'static str>)> {
        vec![
            // psql one-liners
            (json!(["psql", "-h", "db", "-c", "CREATE TABLE users (id int)"]), json!([]), vec!["CREATE TABLE users"], None),
            (json!(["psql", "--command=CREATE TABLE IF NOT EXISTS users (id int)"]), json!([]), vec![], None),
            (json!(["psql"]), json!(["-v", "ON_ERROR_STOP=1", "-c", "CREATE EXTENSION postgis;"]), vec!["CREATE EXTENSION postgis"], None),
            // mysql one-liners
            (json!(["mysql", "-uroot", "-e", "CREATE DATABASE app; CREATE USER 'app'@'%';"]), json!([]), vec!["CREATE DATABASE app", "CREATE USER 'app'@'%'"], None),
            (json!(["mysql", "--execute=CREATE DATABASE IF NOT EXISTS app"]), json!([]), vec![], None),
            // sh -c chains
            (json!(["/bin/sh", "-c"]), json!(["kubectl create secret generic s --from-literal=a=b && mkdir -p /x"]), vec!["kubectl create secret generic s --from-literal=a=b"], None),
            (json!(["sh", "-ec", "kubectl create ns a --dry-run=client -o yaml | kubectl apply -f -"]), json!([]), vec![], None),
            (json!(["bash", "-c", "helm install app ./chart || true; helm upgrade --install b ./c"]), json!([]), vec![], None),
            (json!(["sh", "-c", "helm install app ./chart"]), json!([]), vec!["helm install app ./chart"], None),
            (json!(["sh", "-c", "curl -fsS -X POST https://api/register -d '{}'\ncurl -s https://api/health"]), json!([]), vec!["curl -fsS -X POST https://api/register -d '{}'"], None),
            (json!(["sh", "-c", "createdb app"]), json!([]), vec!["createdb app"], None),
            // existence checks guard the create
            (json!(["sh", "-c", "kubectl get ns a || kubectl create ns a"]), json!([]), vec![], None),
            (json!(["sh", "-c", "if ! psql -tAc \"SELECT 1 FROM pg_database WHERE datname='app'\" | grep -q 1; then\n  psql -c 'CREATE DATABASE app'\nfi\npsql -c 'CREATE SCHEMA app'"]), json!([]), vec!["CREATE SCHEMA app"], None),
            // heredocs
            (json!(["sh", "-c", "psql \"$DATABASE_URL\" <<'EOF'\nCREATE TABLE a (id int);\nALTER TABLE a ADD COLUMN b int;\nEOF\n"]), json!([]), vec!["CREATE TABLE a", "ALTER TABLE a ADD COLUMN b"], None),
            (json!(["sh", "-c", "for f in /scripts/*.sql; do psql -f \"$f\"; done"]), json!([]), vec!["INSERT INTO t VALUES"], None),
            (json!(["bash", "-c", "mysql -h db <<SQL\nINSERT INTO t VALUES (1) ON DUPLICATE KEY UPDATE id = id;\nSQL"]), json!([]), vec![], None),
            // files and env from ConfigMaps
            (json!(["sh", "/scripts/run.sh"]), json!([]), vec!["mkdir /data/x", "INSERT INTO t VALUES"], None),
            (json!(["psql", "-c", "$(INIT_SQL)"]), json!([]), vec![], None),
            (json!(["psql", "-c", "${INIT_SQL}"]), json!([]), vec!["CREATE TABLE t"], None),
            // migration tools
            (json!(["flyway", "migrate"]), json!([]), vec![], Some("flyway")),
            (json!(["liquibase", "--changelog-file=c.xml", "update"]), json!([]), vec![], Some("liquibase")),
            (json!(["migrate", "-path", "/m", "-database", "$DB", "up"]), json!([]), vec![], Some("golang-migrate")),
            (json!(["goose", "up"]), json!([]), vec![], Some("goose")),
            (json!(["dbmate", "up"]), json!([]), vec![], Some("dbmate")),
            (json!(["atlas", "migrate", "apply"]), json!([]), vec![], Some("atlas")),
            (json!(["sqitch", "deploy"]), json!([]), vec![], Some("sqitch")),
            (json!(["alembic", "upgrade", "head"]), json!([]), vec![], Some("alembic")),
            (json!(["python", "manage.py", "migrate", "--noinput"]), json!([]), vec![], Some("django")),
            (json!(["sh", "-c", "bundle exec rake db:migrate"]), json!([]), vec![], Some("rails")),
            (json!(["bin/rails", "db:migrate"]), json!([]), vec![], Some("rails")),
            (json!(["npx", "prisma", "migrate", "deploy"]), json!([]), vec![], Some("prisma")),
            (json!(["npx", "knex", "migrate:latest"]), json!([]), vec![], Some("knex")),
            (json!(["npx", "sequelize-cli", "db:migrate"]), json!([]), vec![], Some("sequelize")),
            (json!(["diesel", "migration", "run"]), json!([]), vec![], Some("diesel")),
            (json!(["sqlx", "migrate", "run"]), json!([]), vec![], Some("sqlx")),
            (json!(["refinery", "migrate", "-e", "DB"]), json!([]), vec![], Some("refinery")),
            (json!(["npm", "run", "typeorm", "migration:run"]), json!([]), vec![], Some("typeorm")),
            (json!(["mix", "ecto.migrate"]), json!([]), vec![], Some("ecto")),
            (json!(["/app/bin/app", "eval", "App.Release.migrate"]), json!([]), vec![], Some("ecto")),
            (json!(["php", "artisan", "migrate", "--force"]), json!([]), vec![], Some("laravel")),
        ]
    }

    #[test]
    fn real_world_commands() {
        let res = resources();
        for (cmd, args, expected, tool) in table() {
            let j = job(cmd.clone(), args);
            let w = analyze(&j, &res);
            let got: Vec<&str> = w.problems.iter().map(|p| p.statement.as_str()).collect();
            assert_eq!(got, expected, "{cmd}");
            assert_eq!(w.migration_tool.as_deref(), tool, "{cmd}");
        }
    }

    #[test]
    fn places_name_the_line() {
        let j = job(json!(["sh", "-c", "echo hi\nmkdir /a"]), json!([]));
        let w = analyze(&j, &[]);
        assert_eq!(w.problems[0].place, "line 2 of the script of container `c`");
        let j = job(json!(["sh", "/scripts/run.sh"]), json!([]));
        let w = analyze(&j, &resources());
        assert_eq!(
            w.problems[0].place,
            "line 3 of `run.sh` in ConfigMap `scripts`"
        );
        assert_eq!(
            w.problems[1].place,
            "line 1 of `seed.sql` in ConfigMap `scripts`"
        );
    }

    #[test]
    fn odd_input_does_not_panic() {
        for cmd in [
            json!(["psql", "-é", "-c"]),
            json!(["sh", "-c", "psql <<"]),
            json!(["sh", "-c", "'unterminated"]),
            json!(["sh", "-c", "cat <<EOF"]),
            json!(["mysql", "-e", "$$ DO 'x"]),
            json!(["sh", "-c", "a\\"]),
        ] {
            let _ = analyze(&job(cmd, json!([])), &resources());
        }
    }

    #[test]
    fn images_that_are_migration_tools() {
        assert_eq!(migration_image("flyway/flyway:10"), Some("flyway"));
        assert_eq!(
            migration_image("docker.io/migrate/migrate:v4.17.0"),
            Some("golang-migrate")
        );
        assert_eq!(migration_image("registry:5000/team/app:1"), None);
    }
}
