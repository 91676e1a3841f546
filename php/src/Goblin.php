<?php

declare(strict_types=1);

namespace Goblin;

/** The package's version, and the module's it needs. */
final class Goblin
{
    /** This package's version: the module's (Cargo.toml's), as goblin_redis's and goblin-redis's. */
    public const VERSION = '0.4.0';

    /**
     * The oldest module this package works with, as `MODULE LIST` gives its `ver`: major * 10000
     * + minor * 100 + patch.
     */
    public const MODULE_VERSION = 400;

    private function __construct()
    {
    }

    /** `40100` as `4.1.0`. */
    public static function versionText(int $version): string
    {
        return sprintf('%d.%d.%d', intdiv($version, 10000), intdiv($version, 100) % 100, $version % 100);
    }
}
