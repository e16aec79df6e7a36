//! The shell reader on the evasions the guard must see through and the text it must not
//! take for commands.

use super::*;

fn programs(text: &str) -> Vec<String> {
    commands(text)
        .into_iter()
        .map(|s| {
            format!("{} {}", s.program, s.args.join(" "))
                .trim()
                .to_string()
        })
        .collect()
}

#[test]
fn wrappers_and_nested_scripts_are_seen_through() {
    assert_eq!(programs("npm test"), ["npm test"]);
    assert_eq!(programs("cd pkg && npm publish"), ["cd pkg", "npm publish"]);
    assert_eq!(programs("sh -c 'npm publish'"), ["npm publish"]);
    assert_eq!(
        programs("bash -lc \"cargo publish --allow-dirty\""),
        ["cargo publish --allow-dirty"]
    );
    assert_eq!(programs("env X=1 npm publish"), ["npm publish"]);
    assert_eq!(programs("FOO=bar npm publish"), ["npm publish"]);
    assert_eq!(programs("sudo -u app npm publish"), ["npm publish"]);
    assert_eq!(programs("timeout 30 npm publish"), ["npm publish"]);
    assert_eq!(programs("./node_modules/.bin/npm publish"), ["npm publish"]);
    assert_eq!(
        programs("echo x | xargs -n1 npm publish"),
        ["echo x", "npm publish"]
    );
    assert_eq!(programs("eval 'npm publish'"), ["npm publish"]);
    let subs = programs("echo $(npm publish) `cargo publish`");
    assert!(subs.contains(&"npm publish".to_string()), "{subs:?}");
    assert!(subs.contains(&"cargo publish".to_string()), "{subs:?}");
    // Words in quotes are words, not commands.
    assert_eq!(
        programs("echo 'npm publish is never run'"),
        ["echo npm publish is never run"]
    );
    assert_eq!(
        programs("git commit -m \"prepare publish\""),
        ["git commit -m prepare publish"]
    );
}

#[test]
fn variables_set_expanded_and_words_as_written_are_kept() {
    let c = commands("NODE_ENV=production env A=1 ./bin/knex migrate:latest");
    assert_eq!(c[0].program, "knex");
    assert_eq!(
        c[0].env,
        [
            ("NODE_ENV".to_string(), "production".to_string()),
            ("A".to_string(), "1".to_string())
        ]
    );
    assert_eq!(c[0].words[3], "./bin/knex");
    let refs = |t: &str| -> Vec<String> { commands(t).into_iter().flat_map(|s| s.refs).collect() };
    assert_eq!(refs("psql \"$DB\" -c x"), ["DB"]);
    assert_eq!(
        refs("psql ${DB:-$FALLBACK} && echo ${#X}"),
        ["DB", "FALLBACK", "X"]
    );
    assert_eq!(
        refs("echo '$DB' \\$HOME $1 $@ $(true)"),
        Vec::<String>::new()
    );
    assert_eq!(refs("sh -c 'psql $DB'"), ["DB"]);
    // A command that only sets variables is kept, for what it expands.
    let c = commands("X=$PROD; psql \"$X\"");
    assert_eq!(
        (c[0].program.as_str(), c[0].refs.as_slice()),
        ("", &["PROD".to_string()][..])
    );
    // A shell that passes arguments to its script is kept beside the script's commands.
    let c = programs("bash -c 'psql \"$1\"' _ \"$DB\"");
    assert_eq!(c, ["psql $1", "bash -c psql \"$1\" _ $DB"]);
}

#[test]
fn dotenv_wrappers_are_seen_through() {
    assert_eq!(
        programs("dotenv -e .env.production -- prisma migrate deploy"),
        ["prisma migrate deploy"]
    );
    assert_eq!(
        programs("dotenv -e .env.production npm publish"),
        ["npm publish"]
    );
    assert_eq!(
        programs("npx dotenvx run -f .env.production -- cargo publish"),
        ["cargo publish"]
    );
    assert_eq!(
        programs("env-cmd -f .env.prod npm publish"),
        ["npm publish"]
    );
}

#[test]
fn a_here_document_is_a_script_for_a_shell_and_data_for_anything_else() {
    let journal = "cat >> \"$CONVEYOR_JOURNAL\" <<'EOF'\n{\"text\": \"may I run npm publish with $TOKEN?\"}\nEOF\necho done";
    assert_eq!(
        programs(journal),
        ["cat >> $CONVEYOR_JOURNAL << EOF", "echo done"]
    );
    let refs: Vec<String> = commands(journal).into_iter().flat_map(|s| s.refs).collect();
    assert_eq!(refs, ["CONVEYOR_JOURNAL"]);
    // Unquoted, the body is expanded by the shell that reads the line.
    let c = commands("cat > conf <<-EOF\n\turl=$PROD\n\tEOF\n");
    assert_eq!(c[0].refs, ["PROD"]);
    assert_eq!(
        programs("sudo bash <<'EOF'\nnpm publish\nEOF\n"),
        ["npm publish", "bash << EOF"]
    );
    assert_eq!(programs("cat <<< 'npm publish'"), ["cat <<< npm publish"]);
}
