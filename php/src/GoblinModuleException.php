<?php

declare(strict_types=1);

namespace Goblin;

/**
 * The server has no Goblin module, or one older than this package needs: raised before any
 * Goblin command is sent, with what to load. Found by `MODULE LIST`, once per connection, or,
 * where the server refuses `MODULE LIST`, by the Goblin command it then does not know.
 */
final class GoblinModuleException extends CommandException
{
    /** Raises this unless `MODULE LIST`'s reply lists Goblin, recent enough. */
    public static function check(mixed $reply): void
    {
        $version = self::moduleVersion($reply);
        if (null === $version) {
            throw new self(self::missing('Goblin module (MODULE LIST lists none)'));
        }
        if ($version < Goblin::MODULE_VERSION) {
            throw new self(sprintf(
                "the server's Goblin module is version %d (%s); goblin-redis needs version %d (%s) or later: "
                . 'load a newer libgoblin.so (MODULE UNLOAD needs the module\'s allow-unload argument, so restart '
                . 'the server with the new loadmodule)',
                $version,
                Goblin::versionText($version),
                Goblin::MODULE_VERSION,
                Goblin::versionText(Goblin::MODULE_VERSION),
            ));
        }
    }

    /**
     * What the server's error reply to the Goblin command `$command` says of the module, if
     * anything: it lacks the command, or takes other arguments (an older module).
     */
    public static function fromCommandError(string $command, CommandException $error): ?self
    {
        if (!str_starts_with(strtoupper($command), 'GOBLIN.')) {
            return null;
        }
        $text = strtolower($error->getMessage());
        if (str_contains($text, 'unknown command')) {
            return new self(self::missing($command), 0, $error);
        }
        if (str_contains($text, 'wrong number of arguments')) {
            return new self(sprintf(
                "the server's %s does not take these arguments: its Goblin module is older than goblin-redis "
                . 'needs (version %d or later): load a newer libgoblin.so',
                $command,
                Goblin::MODULE_VERSION,
            ), 0, $error);
        }

        return null;
    }

    /** Goblin's `ver` in a `MODULE LIST` reply (a list of flat name, value lists); null without it. */
    public static function moduleVersion(mixed $reply): ?int
    {
        if (!\is_array($reply)) {
            return null;
        }
        foreach ($reply as $module) {
            if (!\is_array($module)) {
                continue;
            }
            $fields = [];
            $values = array_values($module);
            for ($i = 0; $i + 1 < \count($values); $i += 2) {
                if (\is_string($values[$i])) {
                    $fields[$values[$i]] = $values[$i + 1];
                }
            }
            if ('goblin' === ($fields['name'] ?? null)) {
                $version = $fields['ver'] ?? 0;

                return is_numeric($version) ? (int) $version : 0;
            }
        }

        return null;
    }

    private static function missing(string $what): string
    {
        return sprintf(
            'the server has no %s: load the Goblin module (loadmodule /path/to/libgoblin.so in its config '
            . 'file, or MODULE LOAD /path/to/libgoblin.so; on every node of a cluster); goblin-redis needs '
            . "Goblin %s (MODULE LIST's ver %d) or later",
            $what,
            Goblin::versionText(Goblin::MODULE_VERSION),
            Goblin::MODULE_VERSION,
        );
    }
}
