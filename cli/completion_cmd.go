package cli

import (
	"fmt"

	"github.com/urfave/cli/v2"
)

// The shell completion scripts. Both ask leaderlab itself what may come next: urfave/cli answers a
// command line ending in --generate-bash-completion with the commands (or, after a word starting
// with "-", the flags) that fit there, one per line.
const bashCompletion = `# bash completion for leaderlab. Load it with: source <(leaderlab completion bash)
# or save it as /etc/bash_completion.d/leaderlab.
_leaderlab_complete() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local -a before=("${COMP_WORDS[@]:0:COMP_CWORD}")
  local IFS=$'\n' asked
  if [[ $cur == -* ]]; then
    asked=$("${before[@]}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    asked=$("${before[@]}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "$asked" -- "$cur"))
  if [[ ${#COMPREPLY[@]} -eq 0 ]]; then
    compopt -o default 2>/dev/null # file names, e.g. for a run directory
  fi
}
complete -F _leaderlab_complete leaderlab
`

const zshCompletion = `#compdef leaderlab
# zsh completion for leaderlab. Load it with: source <(leaderlab completion zsh)
# or save it as _leaderlab in a directory of $fpath.
_leaderlab_complete() {
  local -a asked
  local cur=${words[CURRENT]}
  if [[ $cur == -* ]]; then
    asked=("${(@f)$(${words[1,CURRENT-1]} $cur --generate-bash-completion 2>/dev/null)}")
  else
    asked=("${(@f)$(${words[1,CURRENT-1]} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ -n ${asked[1]} ]]; then
    _describe 'leaderlab' asked
  else
    _files
  fi
}
compdef _leaderlab_complete leaderlab
`

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:         "completion",
		Usage:        "print the shell completion script: bash or zsh (source <(leaderlab completion bash))",
		ArgsUsage:    "bash|zsh",
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			switch c.Args().First() {
			case "bash":
				fmt.Print(bashCompletion)
			case "zsh":
				fmt.Print(zshCompletion)
			default:
				return cli.Exit(fmt.Sprintf("completion %q: want bash or zsh", c.Args().First()), ExitUnusable)
			}
			return nil
		},
	}
}

func manCommand() *cli.Command {
	return &cli.Command{
		Name:         "man",
		Usage:        "print the manual page (roff): leaderlab man > leaderlab.1; man ./leaderlab.1",
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			page, err := c.App.ToMan()
			if err != nil {
				return cli.Exit(fmt.Sprintf("man: %v", err), ExitUnusable)
			}
			fmt.Print(page)
			return nil
		},
	}
}
