#!/bin/sh
# sshd's ForceCommand for a stand-in switch (tests/switch_ssh.rs): the
# stand-in's tools first on PATH, each session's command line logged, then
# the command the client asked for, as the login shell would have run it.
dir=$1
export STANDIN_DIR="$dir"
PATH="$dir/bin:$PATH"
export PATH
printf '%s\n' "$SSH_ORIGINAL_COMMAND" >> "$dir/sessions"
if [ -z "$SSH_ORIGINAL_COMMAND" ]; then
    exec /bin/sh
fi
exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"
