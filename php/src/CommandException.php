<?php

declare(strict_types=1);

namespace Goblin;

/**
 * The server's error reply to a command (its message is the reply, as `ERR syntax error`). The
 * libraries' stores and limiters turn it into their own exceptions where they have one.
 */
class CommandException extends \RuntimeException
{
}
