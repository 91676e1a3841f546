<?php

declare(strict_types=1);

namespace Goblin\Tests\Symfony\Lock;

use Goblin\Symfony\Lock\GoblinStore;
use Symfony\Component\Lock\PersistingStoreInterface;
use Symfony\Component\Lock\Tests\Store\AbstractRedisStoreTestCase;
use Symfony\Component\Lock\Tests\Store\BlockingStoreTestTrait;
use Symfony\Component\Lock\Tests\Store\SharedLockStoreTestTrait;

/**
 * Symfony's own abstract Redis store test case and its traits (expiring, through the case;
 * shared; blocking), unmodified, on GoblinStore by its own name.
 *
 * @requires extension redis
 */
final class GoblinStoreTest extends AbstractRedisStoreTestCase
{
    use BlockingStoreTestTrait;
    use SharedLockStoreTestTrait;

    protected function getRedisConnection(): object
    {
        [$host, $port] = explode(':', (string) getenv('REDIS_HOST'));
        $redis = new \Redis();
        $redis->connect($host, (int) $port);

        return $redis;
    }

    public function getStore(): PersistingStoreInterface
    {
        return new GoblinStore($this->getRedisConnection());
    }
}
