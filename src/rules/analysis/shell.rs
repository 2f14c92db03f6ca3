//! Splitting a shell script into simple commands: lists (`;`, `&&`, `||`,
//! `|`, newlines), comments, line continuations and here-documents, each
//! command's words split with `shlex`. Enough of POSIX sh to read what a
//! container runs; not an interpreter.

/// One simple command of a script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Command {
    /// Words, with leading assignments and wrappers (`exec`, `env`, `if`…) removed.
    pub(crate) argv: Vec<String>,
    /// 1-based line in the script where the command starts.
    pub(crate) line: u32,
    /// The body of a here-document fed to it, if any.
    pub(crate) heredoc: Option<String>,
    /// A file redirected to its standard input (`< file`).
    pub(crate) stdin_file: Option<String>,
    /// Its failure is tolerated (`cmd || true`), or it runs only when a check
    /// failed (`check || cmd`, inside `if … then … fi`).
    pub(crate) tolerated: bool,
    /// The command as written (one line, trimmed).
    pub(crate) text: String,
}

impl Command {
    /// The basename of the program.
    #[must_use]
    pub(crate) fn program(&self) -> &str {
        self.argv
            .first()
            .map_or("", |p| p.rsplit('/').next().unwrap_or(p))
    }
}

/// A raw command before word splitting.
struct Raw {
    text: String,
    line: u32,
    heredoc_delims: Vec<(String, bool)>,
    heredocs: Vec<String>,
    followed_by_or: bool,
}

impl Raw {
    fn new(line: u32) -> Raw {
        Raw {
            text: String::new(),
            line,
            heredoc_delims: Vec::new(),
            heredocs: Vec::new(),
            followed_by_or: false,
        }
    }
}

/// Splits a script into simple commands.
#[must_use]
pub(crate) fn parse_script(script: &str) -> Vec<Command> {
    let raws = split_raw(script);
    let mut out: Vec<Command> = Vec::new();
    let mut after_or = false;
    let mut if_depth: u32 = 0;
    for raw in raws {
        let first = raw.text.split_whitespace().next().unwrap_or("");
        if first == "if" {
            if_depth += 1;
        }
        let cmd = words(&raw);
        if let Some(mut c) = cmd {
            // `check || create` and `if … then create fi`: the command only runs
            // when a check failed, so a second run does not reach it.
            c.tolerated |= after_or || if_depth > 0;
            if raw.followed_by_or {
                c.tolerated = true;
            }
            out.push(c);
        }
        if first == "fi" {
            if_depth = if_depth.saturating_sub(1);
        }
        after_or = raw.followed_by_or;
    }
    out
}

fn split_raw(script: &str) -> Vec<Raw> {
    let chars: Vec<char> = script.chars().collect();
    let mut out = Vec::new();
    let mut cur = Raw::new(1);
    let mut line: u32 = 1;
    let mut i = 0;
    let mut quote: Option<char> = None;
    let flush = |cur: &mut Raw, out: &mut Vec<Raw>, line: u32, or: bool| {
        let mut done = std::mem::replace(cur, Raw::new(line));
        done.followed_by_or = or;
        out.push(done);
    };
    while i < chars.len() {
        let c = chars[i];
        if let Some(q) = quote {
            cur.text.push(c);
            if c == '\\' && q == '"' && i + 1 < chars.len() {
                cur.text.push(chars[i + 1]);
                if chars[i + 1] == '\n' {
                    line += 1;
                }
                i += 2;
                continue;
            }
            if c == '\n' {
                line += 1;
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                cur.text.push(c);
            }
            '\\' if chars.get(i + 1) == Some(&'\n') => {
                cur.text.push(' ');
                line += 1;
                i += 2;
                continue;
            }
            '\\' => {
                cur.text.push(c);
                if let Some(n) = chars.get(i + 1) {
                    cur.text.push(*n);
                }
                i += 2;
                continue;
            }
            '#' if cur.text.is_empty() || cur.text.ends_with(char::is_whitespace) => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '<' if chars.get(i + 1) == Some(&'<') && chars.get(i + 2) != Some(&'<') => {
                // Here-document: read the delimiter word now, the body after the line ends.
                let mut j = i + 2;
                let strip_tabs = chars.get(j) == Some(&'-');
                if strip_tabs {
                    j += 1;
                }
                while chars.get(j).is_some_and(|c| *c == ' ' || *c == '\t') {
                    j += 1;
                }
                let mut delim = String::new();
                while let Some(&d) = chars.get(j) {
                    if d.is_whitespace() || matches!(d, ';' | '|' | '&' | ')' | '>' | '<') {
                        break;
                    }
                    if !matches!(d, '\'' | '"' | '\\') {
                        delim.push(d);
                    }
                    j += 1;
                }
                if !delim.is_empty() {
                    cur.heredoc_delims.push((delim, strip_tabs));
                }
                cur.text.push_str(" <<HEREDOC ");
                i = j;
                continue;
            }
            '\n' => {
                line += 1;
                let delims = std::mem::take(&mut cur.heredoc_delims);
                let mut bodies = Vec::new();
                i += 1;
                for (delim, _) in &delims {
                    let mut body = String::new();
                    while i < chars.len() {
                        let end = chars[i..]
                            .iter()
                            .position(|c| *c == '\n')
                            .map_or(chars.len(), |p| i + p);
                        let l: String = chars[i..end].iter().collect();
                        i = end + 1;
                        line += 1;
                        if l.trim() == delim {
                            break;
                        }
                        body.push_str(&l);
                        body.push('\n');
                    }
                    bodies.push(body);
                }
                cur.heredocs = bodies;
                flush(&mut cur, &mut out, line, false);
                continue;
            }
            ';' => flush(&mut cur, &mut out, line, false),
            '&' if chars.get(i + 1) == Some(&'&') => {
                flush(&mut cur, &mut out, line, false);
                i += 2;
                continue;
            }
            '|' if chars.get(i + 1) == Some(&'|') => {
                flush(&mut cur, &mut out, line, true);
                i += 2;
                continue;
            }
            '|' | '&' | '(' | ')' | '{' | '}' if is_word_boundary(&cur.text) => {
                flush(&mut cur, &mut out, line, false);
            }
            _ => cur.text.push(c),
        }
        i += 1;
    }
    flush(&mut cur, &mut out, line, false);
    out.retain(|r| !r.text.trim().is_empty() || !r.heredocs.is_empty());
    out
}

fn is_word_boundary(text: &str) -> bool {
    // `$(`, `${` and `a{b}` stay inside a word.
    !(text.ends_with('$') || text.ends_with(|c: char| c.is_alphanumeric() || c == '_'))
        || text.trim().is_empty()
}

/// Words that start a command without being its program (the closing
/// keywords leave nothing behind).
const WRAPPERS: [&str; 18] = [
    "exec", "time", "command", "nohup", "sudo", "then", "do", "else", "if", "elif", "while",
    "until", "!", "eval", "xargs", "fi", "done", "esac",
];

fn words(raw: &Raw) -> Option<Command> {
    let mut text = raw.text.trim().to_string();
    let mut stdin_file = None;
    // `< file` (not `<<`): take the file, drop the redirect.
    if let Some(p) = find_unquoted(&text, "< ") {
        let rest = text[p + 2..].trim_start();
        let file: String = rest.chars().take_while(|c| !c.is_whitespace()).collect();
        if !file.is_empty() {
            stdin_file = Some(file.trim_matches(['"', '\'']).to_string());
            let end = p + 2 + (text[p + 2..].len() - rest.len()) + file.len();
            text.replace_range(p..end, "");
        }
    }
    let display = text.replace("<<HEREDOC", "<<EOF");
    let mut argv: Vec<String> = shlex::split(&text)
        .unwrap_or_else(|| text.split_whitespace().map(str::to_string).collect());
    argv.retain(|w| w != "<<HEREDOC" && !w.starts_with('>') && !w.starts_with("2>"));
    // Leading assignments and wrappers.
    while let Some(first) = argv.first() {
        let is_assign = first.contains('=')
            && first.split('=').next().is_some_and(|n| {
                !n.is_empty() && n.chars().all(|c| c.is_alphanumeric() || c == '_')
            });
        if is_assign || WRAPPERS.contains(&first.as_str()) {
            argv.remove(0);
            continue;
        }
        if first == "env" || first == "timeout" {
            argv.remove(0);
            while argv.first().is_some_and(|w| {
                w.starts_with('-')
                    || w.contains('=')
                    || w.parse::<f64>().is_ok()
                    || w.ends_with('s') && w[..w.len() - 1].parse::<f64>().is_ok()
            }) {
                argv.remove(0);
            }
            continue;
        }
        break;
    }
    if argv.is_empty() && raw.heredocs.is_empty() {
        return None;
    }
    Some(Command {
        argv,
        line: raw.line,
        heredoc: raw.heredocs.first().cloned(),
        stdin_file,
        tolerated: false,
        text: display.split_whitespace().collect::<Vec<_>>().join(" "),
    })
}

fn find_unquoted(text: &str, pat: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in text.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            None if c == '\'' || c == '"' => quote = Some(c),
            None if text[i..].starts_with(pat) && !text[..i].ends_with('<') => return Some(i),
            _ => {}
        }
    }
    None
}

/// The script of `sh -c SCRIPT` (any common shell, combined flags like `-ec`),
/// or `None` when `argv` is not a shell running an inline script.
#[must_use]
pub(crate) fn inline_script(argv: &[String]) -> Option<&str> {
    let prog = argv.first()?.rsplit('/').next()?;
    if !matches!(prog, "sh" | "bash" | "ash" | "dash" | "zsh" | "ksh") {
        return None;
    }
    let mut it = argv.iter().skip(1);
    while let Some(a) = it.next() {
        if a.starts_with('-') && !a.starts_with("--") && a.contains('c') {
            return it.next().map(String::as_str);
        }
        if a == "-o" {
            it.next();
            continue;
        }
        if !a.starts_with('-') {
            return None;
        }
    }
    None
}

/// The script file of `sh FILE` / `bash FILE`, or `None`.
#[must_use]
pub(crate) fn script_file(argv: &[String]) -> Option<&str> {
    let prog = argv.first()?.rsplit('/').next()?;
    if matches!(prog, "sh" | "bash" | "ash" | "dash" | "zsh" | "ksh") {
        return argv
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-'))
            .map(String::as_str);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argvs(s: &str) -> Vec<Vec<String>> {
        parse_script(s).into_iter().map(|c| c.argv).collect()
    }

    #[test]
    fn lists_split_into_commands() {
        assert_eq!(
            argvs("set -e; mkdir /data && kubectl create ns x || true\necho 'a;b'"),
            vec![
                vec!["set".to_string(), "-e".into()],
                vec!["mkdir".into(), "/data".into()],
                vec!["kubectl".into(), "create".into(), "ns".into(), "x".into()],
                vec!["true".into()],
                vec!["echo".into(), "a;b".into()],
            ]
        );
        let cmds = parse_script("kubectl create ns x || true");
        assert!(cmds[0].tolerated);
        let cmds = parse_script("kubectl get ns x || kubectl create ns x\nmkdir /a");
        assert!(cmds[1].tolerated && !cmds[2].tolerated);
        let cmds = parse_script(
            "if ! kubectl get ns x; then\n  kubectl create ns x\nfi\nhelm install a b",
        );
        let guarded: Vec<bool> = cmds.iter().map(|c| c.tolerated).collect();
        assert_eq!(guarded, vec![true, true, false], "{cmds:?}");
    }

    #[test]
    fn heredoc_body_is_attached_with_lines() {
        let s = "echo start\npsql \"$URL\" <<-'SQL'\nCREATE TABLE t (id int);\nSQL\necho done\n";
        let cmds = parse_script(s);
        assert_eq!(cmds.len(), 3);
        assert_eq!(cmds[1].program(), "psql");
        assert_eq!(cmds[1].line, 2);
        assert_eq!(
            cmds[1].heredoc.as_deref(),
            Some("CREATE TABLE t (id int);\n")
        );
        assert_eq!(cmds[2].line, 5);
    }

    #[test]
    fn continuations_comments_and_redirects() {
        let s = "# init\nmysql -h db \\\n  -u root < /sql/init.sql  # load\nenv A=1 timeout 30 helm install x ./c";
        let cmds = parse_script(s);
        assert_eq!(cmds[0].program(), "mysql");
        assert_eq!(cmds[0].stdin_file.as_deref(), Some("/sql/init.sql"));
        assert_eq!(cmds[1].argv, vec!["helm", "install", "x", "./c"]);
        assert_eq!(cmds[1].line, 4);
    }

    #[test]
    fn inline_scripts_are_found() {
        let a: Vec<String> = ["/bin/sh", "-ec", "echo hi"].map(String::from).to_vec();
        assert_eq!(inline_script(&a), Some("echo hi"));
        let a: Vec<String> = ["bash", "-o", "pipefail", "-c", "x"]
            .map(String::from)
            .to_vec();
        assert_eq!(inline_script(&a), Some("x"));
        let a: Vec<String> = ["bash", "/scripts/run.sh"].map(String::from).to_vec();
        assert_eq!(inline_script(&a), None);
        assert_eq!(script_file(&a), Some("/scripts/run.sh"));
    }
}
