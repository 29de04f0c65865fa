#!/bin/sh
# sshd's ForceCommand for a stand-in switch (tests/switch_ssh.rs), as
# `login.sh DIR [NETNS]`: the stand-in's tools (DIR/bin) first on PATH,
# each session's command line logged to DIR/sessions with the time it
# started, then the command the client asked for, as the login shell would
# have run it; inside network namespace NETNS when given (the Cumulus
# stand-in's ports are real veths).
dir=$1
ns=$2
ip=$(command -v ip)
export STANDIN_DIR="$dir"
PATH="$dir/bin:$PATH"
export PATH
printf "%s %s\n" "$(date +%s.%N)" "$SSH_ORIGINAL_COMMAND" >> "$dir/sessions"
set -- /bin/sh
if [ -n "$SSH_ORIGINAL_COMMAND" ]; then
    set -- /bin/sh -c "$SSH_ORIGINAL_COMMAND"
fi
if [ -n "$ns" ]; then
    exec "$ip" netns exec "$ns" "$@"
fi
exec "$@"
