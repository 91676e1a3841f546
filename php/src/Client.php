<?php

declare(strict_types=1);

namespace Goblin;

use Predis\ClientInterface as PredisClient;
use Predis\Command\Processor\KeyPrefixProcessor;
use Predis\Command\RawCommand;
use Predis\Connection\Aggregate\ClusterInterface as PredisCluster;
use Predis\Response\ErrorInterface as PredisError;
use Predis\Response\ServerException as PredisServerException;
use Predis\Response\Status as PredisStatus;

/**
 * The application's own client, as Goblin sends its commands on it: phpredis's `\Redis`,
 * `\RedisArray` and `\RedisCluster` (and Symfony's lazy proxies of them), and Predis's
 * `ClientInterface` (one server, a replication, a cluster).
 *
 * Every command has one key, routed as the client routes a core command's: to the node a
 * `\RedisArray` hashes it to, to the cluster node that owns its slot. Keys are prefixed as the
 * client prefixes them (phpredis's `OPT_PREFIX`, Predis's `prefix` option), which it does not
 * do for a command it does not know. Replies come back as plain PHP values: integers, strings,
 * `null` for nil, lists; an error reply is a {@see CommandException}.
 *
 * Before the first Goblin command on a connection the server is asked `MODULE LIST`, once: a
 * server without Goblin, or with one older than {@see Goblin::MODULE_VERSION}, is a
 * {@see GoblinModuleException} before anything is sent. A server that refuses `MODULE LIST`
 * (an ACL, a proxy) is taken at its word, and a Goblin command it then does not know is the
 * same exception.
 */
final class Client
{
    private const REDIS = 'redis';
    private const ARRAY = 'array';
    private const CLUSTER = 'cluster';
    private const PREDIS = 'predis';

    /** @var \WeakMap<object, self>|null */
    private static ?\WeakMap $clients = null;

    /** @var \WeakMap<object, true>|null the connections whose server passed `MODULE LIST` */
    private static ?\WeakMap $checked = null;

    private function __construct(private readonly object $redis, private readonly string $kind)
    {
    }

    /**
     * The Goblin client over `$redis`, one per client object.
     *
     * @throws \InvalidArgumentException for anything but the clients above
     */
    public static function of(object $redis): self
    {
        self::$clients ??= new \WeakMap();

        return self::$clients[$redis] ??= new self($redis, self::kind($redis));
    }

    /** Whether `$redis` is a client Goblin can send its commands on. */
    public static function supports(mixed $redis): bool
    {
        return \is_object($redis) && null !== self::kindOf($redis);
    }

    private static function kind(object $redis): string
    {
        return self::kindOf($redis) ?? throw new \InvalidArgumentException(sprintf(
            'Goblin sends its commands on \Redis, \RedisArray, \RedisCluster or a Predis\ClientInterface, not on %s',
            get_debug_type($redis),
        ));
    }

    private static function kindOf(object $redis): ?string
    {
        return match (true) {
            $redis instanceof \Redis, is_a($redis, 'Symfony\Component\Cache\Traits\RedisProxy') => self::REDIS,
            $redis instanceof \RedisArray => self::ARRAY,
            $redis instanceof \RedisCluster, is_a($redis, 'Symfony\Component\Cache\Traits\RedisClusterProxy') => self::CLUSTER,
            $redis instanceof PredisClient => self::PREDIS,
            default => null,
        };
    }

    /** The client this one sends on. */
    public function redis(): object
    {
        return $this->redis;
    }

    /** `$key` as the client prefixes the keys of the commands it knows. */
    public function prefixed(string $key): string
    {
        if (self::PREDIS === $this->kind) {
            \assert($this->redis instanceof PredisClient);
            $options = $this->redis->getOptions();
            $prefix = isset($options->prefix) ? $options->prefix : null;

            return $prefix instanceof KeyPrefixProcessor ? $prefix->getPrefix() . $key : $key;
        }
        $node = self::ARRAY === $this->kind ? $this->node($key) : $this->redis;

        return (string) $node->_prefix($key);
    }

    /**
     * Sends `$command` `$key` `...$arguments` (the key prefixed as the client prefixes it) to the
     * node that holds `$key`, after the module check if its connection has not passed it.
     *
     * @param list<string|int|float> $arguments
     *
     * @throws CommandException      the server's error reply
     * @throws GoblinModuleException the server has no Goblin, or an older one
     */
    public function call(string $command, string $key, array $arguments = []): mixed
    {
        $node = $this->connectionFor($key);
        if (!isset(self::$checked[$node])) {
            $this->checkModule($node, $key);
        }
        try {
            return $this->send($node, $key, [$command, $this->prefixed($key), ...$arguments]);
        } catch (CommandException $error) {
            throw GoblinModuleException::fromCommandError($command, $error) ?? $error;
        }
    }

    /**
     * A core command on `$key` (no module check: it needs none), as {@see call()} sends it.
     *
     * @param list<string|int|float> $arguments
     *
     * @throws CommandException the server's error reply
     */
    public function core(string $command, string $key, array $arguments = []): mixed
    {
        return $this->send($this->connectionFor($key), $key, [$command, $this->prefixed($key), ...$arguments]);
    }

    /**
     * How long one blocking command may wait on this client: its read timeout less a margin of a
     * second (a quarter of it for short ones), so that the reply (nil at the slice's end) is back
     * before the client gives up on the socket; {@see Commands::LONGEST_SLICE} when it has none.
     * The margin covers the server's timer, which meets a blocked client's timeout on its next
     * tick (every 100 ms at the default `hz` 10).
     */
    public function sliceLength(string $key): float
    {
        $timeout = $this->readTimeout($this->connectionFor($key));
        if ($timeout <= 0 || is_infinite($timeout)) {
            return Commands::LONGEST_SLICE;
        }

        return max(min($timeout - min(1.0, 0.25 * $timeout), Commands::LONGEST_SLICE), Commands::SHORTEST_WAIT);
    }

    /** The read timeout of the connection `$node` (0 or less: none), in seconds. */
    private function readTimeout(object $node): float
    {
        $default = (float) \ini_get('default_socket_timeout');
        if ($node instanceof PredisClient) {
            $connection = $node->getConnection();
            $parameters = method_exists($connection, 'getParameters') ? $connection->getParameters() : null;
            $value = $parameters?->read_write_timeout;

            return null === $value ? $default : ((float) $value > 0 ? (float) $value : -1.0);
        }
        if (!method_exists($node, 'getReadTimeout') && !$node instanceof \RedisCluster) {
            return $default;
        }
        $timeout = $node instanceof \RedisCluster
            ? (float) $node->getOption(\Redis::OPT_READ_TIMEOUT)
            : (float) $node->getReadTimeout();

        return 0.0 === $timeout ? $default : $timeout;
    }

    /**
     * The object that holds the connection to `$key`'s server: a `\RedisArray`'s node, else the
     * client. `$key` as the application names it: the client prefixes it where it routes.
     */
    private function connectionFor(string $key): object
    {
        return self::ARRAY === $this->kind ? $this->node($key) : $this->redis;
    }

    /** The `\Redis` of a `\RedisArray` that holds `$key`, as the application names it. */
    private function node(string $key): \Redis
    {
        \assert($this->redis instanceof \RedisArray);
        $node = $this->redis->_instance($this->redis->_target($key));
        if (!$node instanceof \Redis) {
            throw new \RuntimeException(sprintf('the RedisArray has no node for the key %s', $key));
        }

        return $node;
    }

    /**
     * `MODULE LIST` on `$node`, for the server that holds `$key`: Goblin must be loaded, at
     * {@see Goblin::MODULE_VERSION} or later. A failed check is not kept: the next call asks
     * again, and finds a module loaded meanwhile.
     */
    private function checkModule(object $node, string $key): void
    {
        try {
            $reply = $this->send($node, $key, ['MODULE', 'LIST']);
        } catch (CommandException) {
            // An ACL or a proxy refused it: a Goblin command the server lacks says so itself.
            self::$checked ??= new \WeakMap();
            self::$checked[$node] = true;

            return;
        }
        GoblinModuleException::check($reply);
        self::$checked ??= new \WeakMap();
        self::$checked[$node] = true;
    }

    /**
     * `$command` on `$node`; a cluster routes it by `$key`, the application's name for it (phpredis
     * prefixes the key it routes by; Predis's slot is the prefixed key's).
     *
     * @param non-empty-list<string|int|float> $command
     */
    private function send(object $node, string $key, array $command): mixed
    {
        if ($node instanceof PredisClient) {
            return $this->sendPredis($node, $key, $command);
        }
        $node->clearLastError();
        try {
            $reply = self::CLUSTER === $this->kind
                ? $node->rawCommand($key, ...$command)
                : $node->rawCommand(...$command);
        } catch (\RedisException $error) {
            // phpredis throws some error replies (NOPERM, ...) where it returns others; its own
            // errors (the connection's) are not in a reply's form, and stay what they are.
            if (1 === preg_match('/^[A-Z][A-Z_-]+ /', $error->getMessage())) {
                throw new CommandException($error->getMessage(), 0, $error);
            }

            throw $error;
        }
        if (false === $reply) {
            $error = $node->getLastError();
            if (null !== $error) {
                $node->clearLastError();
                throw new CommandException($error);
            }
        }

        return self::phpredisReply($reply);
    }

    /** @param non-empty-list<string|int|float> $arguments */
    private function sendPredis(PredisClient $client, string $key, array $arguments): mixed
    {
        $command = RawCommand::create(...$arguments);
        $connection = $client->getConnection();
        if ($connection instanceof PredisCluster && method_exists($connection, 'getClusterStrategy')) {
            $command->setSlot($connection->getClusterStrategy()->getSlotByKey($this->prefixed($key)));
        }
        try {
            $reply = $client->executeCommand($command);
        } catch (PredisServerException $error) {
            throw new CommandException($error->getMessage(), 0, $error);
        }
        if ($reply instanceof PredisError) {
            throw new CommandException($reply->getMessage());
        }

        return self::predisReply($reply);
    }

    /** phpredis's raw reply: `true` for `+OK`, `false` for nil (an error was ruled out). */
    private static function phpredisReply(mixed $reply): mixed
    {
        return match (true) {
            true === $reply => 'OK',
            false === $reply => null,
            \is_array($reply) => array_map(self::phpredisReply(...), $reply),
            default => $reply,
        };
    }

    private static function predisReply(mixed $reply): mixed
    {
        return match (true) {
            $reply instanceof PredisStatus => $reply->getPayload(),
            \is_array($reply) => array_map(self::predisReply(...), $reply),
            default => $reply,
        };
    }
}
